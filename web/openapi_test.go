package web

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// openAPIDoc is the part of an OpenAPI document the test reads.
type openAPIDoc struct {
	OpenAPI    string                                                  `json:"openapi"`
	Info       struct{ Title, Version string }                         `json:"info"`
	Paths      map[string]map[string]openAPIOp                         `json:"paths"`
	Components struct{ Schemas, Responses map[string]json.RawMessage } `json:"components"`
}

type openAPIOp struct {
	OperationID string `json:"operationId"`
	Parameters  []struct {
		Name     string          `json:"name"`
		In       string          `json:"in"`
		Required bool            `json:"required"`
		Example  json.RawMessage `json:"example"`
	} `json:"parameters"`
	Security    []map[string][]string      `json:"security"`
	RequestBody *json.RawMessage           `json:"requestBody"`
	Responses   map[string]openAPIResponse `json:"responses"`
}

type openAPIResponse struct {
	Ref     string `json:"$ref"`
	Content map[string]struct {
		Schema map[string]any `json:"schema"`
	} `json:"content"`
}

func loadOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	dec := json.NewDecoder(strings.NewReader(string(openAPI)))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") || doc.Info.Title == "" || doc.Info.Version == "" || len(doc.Paths) == 0 {
		t.Fatalf("openapi.json is not an OpenAPI 3 document: %q %+v", doc.OpenAPI, doc.Info)
	}
	return doc
}

// TestOpenAPI: every route of the server is documented, every documented operation exists
// and answers with a documented status, and every JSON answer matches its schema.
func TestOpenAPI(t *testing.T) {
	doc := loadOpenAPI(t)
	f := newFixture(t)

	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	routes := map[string]bool{}
	for _, rt := range f.srv.routes {
		if strings.HasPrefix(rt.path, "/api/") || rt.path == "/metrics" {
			key := rt.method + " " + rt.path
			routes[key] = true
			if !documented[key] {
				t.Errorf("route %s is not in openapi.json", key)
			}
		}
	}
	for key := range documented {
		if !routes[key] {
			t.Errorf("openapi.json documents %s, which the server does not have", key)
		}
	}

	resolver := schemaResolver{doc: doc}
	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		for method, op := range doc.Paths[path] {
			method = strings.ToUpper(method)
			if op.OperationID == "" || len(op.Responses) == 0 {
				t.Errorf("%s %s: no operationId or responses", method, path)
			}
			q := url.Values{}
			for _, p := range op.Parameters {
				if p.In != "query" {
					t.Errorf("%s %s: parameter %s in %s; the server reads only query parameters", method, path, p.Name, p.In)
				}
				if !p.Required {
					continue
				}
				var v any = "solar"
				if len(p.Example) > 0 {
					json.Unmarshal(p.Example, &v)
				}
				if p.Name == "id" {
					v = "doc01"
				}
				q.Set(p.Name, fmt.Sprint(v))
			}
			target := path
			if len(q) > 0 {
				target += "?" + q.Encode()
			}
			token, body := "", ""
			if len(op.Security) > 0 {
				token = testToken
				// Without the token, a secured operation is refused.
				if res, _ := f.do(t, method, target, "", `{}`); res.StatusCode != 401 {
					t.Errorf("%s %s without a token: %d", method, path, res.StatusCode)
				}
			}
			if op.RequestBody != nil {
				body = `{"seeds":["http://x.test/"]}`
			}
			f.crawl.running = false
			res, got := f.do(t, method, target, token, body)
			code := strconv.Itoa(res.StatusCode)
			resp, ok := op.Responses[code]
			if !ok {
				t.Errorf("%s %s answered %d, not a documented status: %s", method, target, res.StatusCode, got)
				continue
			}
			if res.StatusCode >= 400 {
				t.Errorf("%s %s answered %d: %s", method, target, res.StatusCode, got)
			}
			resp = resolver.response(t, resp)
			if c, ok := resp.Content["application/json"]; ok {
				var v any
				if err := json.Unmarshal([]byte(got), &v); err != nil {
					t.Errorf("%s %s: not JSON: %v", method, path, err)
					continue
				}
				for _, problem := range resolver.validate(c.Schema, v, "$") {
					t.Errorf("%s %s: %s", method, path, problem)
				}
			}
		}
	}
}

// TestOpenAPIErrorsMatchSchema: error answers have the documented Error shape.
func TestOpenAPIErrorsMatchSchema(t *testing.T) {
	doc := loadOpenAPI(t)
	r := schemaResolver{doc: doc}
	f := newFixture(t)
	for _, target := range []string{"/api/search?q=(x", "/api/search", "/api/document?id=none"} {
		_, body := f.do(t, "GET", target, "", "")
		var v any
		json.Unmarshal([]byte(body), &v)
		for _, p := range r.validate(map[string]any{"$ref": "#/components/schemas/Error"}, v, "$") {
			t.Errorf("%s: %s", target, p)
		}
	}
}

type schemaResolver struct{ doc openAPIDoc }

func (r schemaResolver) response(t *testing.T, resp openAPIResponse) openAPIResponse {
	if resp.Ref == "" {
		return resp
	}
	name := strings.TrimPrefix(resp.Ref, "#/components/responses/")
	raw, ok := r.doc.Components.Responses[name]
	if !ok {
		t.Fatalf("unresolved response %s", resp.Ref)
	}
	var out openAPIResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (r schemaResolver) schema(ref string) (map[string]any, error) {
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	raw, found := r.doc.Components.Schemas[name]
	if !ok || !found {
		return nil, fmt.Errorf("unresolved $ref %s", ref)
	}
	var s map[string]any
	return s, json.Unmarshal(raw, &s)
}

// validate checks v against the subset of JSON Schema that openapi.json uses: $ref, type
// (one or a list, with "null"), required, properties, additionalProperties and items.
func (r schemaResolver) validate(s map[string]any, v any, at string) []string {
	if ref, ok := s["$ref"].(string); ok {
		rs, err := r.schema(ref)
		if err != nil {
			return []string{at + ": " + err.Error()}
		}
		return r.validate(rs, v, at)
	}
	var types []string
	switch ty := s["type"].(type) {
	case string:
		types = []string{ty}
	case []any:
		for _, x := range ty {
			types = append(types, x.(string))
		}
	}
	if len(types) > 0 && !slices.Contains(types, jsonType(v)) && !(jsonType(v) == "integer" && slices.Contains(types, "number")) {
		return []string{fmt.Sprintf("%s: %s, want %v", at, jsonType(v), types)}
	}
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if req, ok := s["required"].([]any); ok {
			for _, k := range req {
				if _, ok := x[k.(string)]; !ok {
					out = append(out, fmt.Sprintf("%s: missing required %q", at, k))
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, val := range x {
			if ps, ok := props[k].(map[string]any); ok {
				out = append(out, r.validate(ps, val, at+"."+k)...)
			} else if as, ok := s["additionalProperties"].(map[string]any); ok {
				out = append(out, r.validate(as, val, at+"."+k)...)
			} else if props != nil && s["additionalProperties"] == nil {
				out = append(out, fmt.Sprintf("%s: property %q is not documented", at, k))
			}
		}
	case []any:
		if is, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				out = append(out, r.validate(is, e, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return out
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// TestSchemaValidatorCatchesMismatches keeps the validator honest.
func TestSchemaValidatorCatchesMismatches(t *testing.T) {
	r := schemaResolver{doc: loadOpenAPI(t)}
	hit := map[string]any{"$ref": "#/components/schemas/Hit"}
	for _, tc := range []struct {
		v    string
		want int
	}{
		{`{"id":"a","url":"u","title":"t","snippet":"s","score":1.5,"kind":"page","rank":1,"host":"h","in_links":0}`, 0},
		{`{"id":"a","url":"u","title":"t","snippet":"s","score":1.5,"kind":"page","rank":1,"host":"h"}`, 1},
		{`{"id":1,"url":"u","title":"t","snippet":"s","score":1.5,"kind":"page","rank":1,"host":"h","in_links":0}`, 1},
		{`{"id":"a","url":"u","title":"t","snippet":"s","score":1.5,"kind":"page","rank":1,"host":"h","in_links":0,"surprise":1}`, 1},
		{`[]`, 1},
	} {
		var v any
		json.Unmarshal([]byte(tc.v), &v)
		if got := r.validate(hit, v, "$"); len(got) != tc.want {
			t.Errorf("validate(%s) = %v; want %d problems", tc.v, got, tc.want)
		}
	}
}

// TestOpenAPIValidates has a standard validator, @seriousme/openapi-schema-validator from
// npm (it checks a document against the official OpenAPI 3.0/3.1 JSON schemas), read the
// document as /api/openapi.json serves it; the licence must be named with an SPDX
// identifier. scripts/test.sh installs the validator:
//
//	npm install --prefix "$HOME/.cache/sonda/openapi-validator" @seriousme/openapi-schema-validator@2.11.0
//
// The test looks for it in $SONDA_OPENAPI_VALIDATOR_DIR, then in that folder, and skips
// when it or node is missing, except under CI=true, where that is a failure.
func TestOpenAPIValidates(t *testing.T) {
	missing := func(why string) {
		const how = `npm install --prefix "$HOME/.cache/sonda/openapi-validator" @seriousme/openapi-schema-validator@2.11.0 (or set SONDA_OPENAPI_VALIDATOR_DIR)`
		if os.Getenv("CI") == "true" {
			t.Fatalf("OpenAPI validation cannot run: %s; install with: %s", why, how)
		}
		t.Skipf("OpenAPI validation skipped: %s; install with: %s", why, how)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found")
	}
	dir := os.Getenv("SONDA_OPENAPI_VALIDATOR_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "sonda", "openapi-validator")
	}
	cli := filepath.Join(dir, "node_modules", "@seriousme", "openapi-schema-validator", "bin", "validate-api-cli.js")
	if _, err := os.Stat(cli); err != nil {
		missing("no validator in " + dir)
	}

	f := newFixture(t)
	res, body := f.do(t, "GET", "/api/openapi.json", "", "")
	if res.StatusCode != 200 {
		t.Fatalf("/api/openapi.json: %d", res.StatusCode)
	}
	var doc struct {
		Info struct {
			License struct{ Name, Identifier, URL string } `json:"license"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if lic := doc.Info.License; lic.Identifier != "Apache-2.0" || lic.URL != "" {
		t.Errorf("info.license = %+v, want the SPDX identifier Apache-2.0 (the LICENSE file)", lic)
	}
	path := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, cli, path).CombinedOutput()
	var verdict struct {
		Valid  bool `json:"valid"`
		Errors any  `json:"errors"`
	}
	if jerr := json.Unmarshal(out, &verdict); jerr != nil || err != nil || !verdict.Valid {
		t.Fatalf("the validator rejects /api/openapi.json (%v):\n%s", err, out)
	}
}
