package web

import (
	_ "embed"
	"net/http"
)

// openAPI is the hand-written OpenAPI 3.1 description of /api. TestOpenAPI checks it
// against the route table both ways and checks answers against its schemas.
//
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(openAPI)
}
