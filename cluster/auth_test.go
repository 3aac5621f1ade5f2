package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// securedServer starts an embedded server in operator mode with a fresh auth directory.
func securedServer(t *testing.T) (*Server, *Auth) {
	t.Helper()
	dir := t.TempDir()
	a, err := InitAuth(filepath.Join(dir, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartServer(ServerOptions{Addr: "127.0.0.1:0", Dir: filepath.Join(dir, "js"), Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s, a
}

// errorsOf connects with creds and collects the asynchronous errors the server sends (a
// permission violation is one) and the connection's closing.
type watched struct {
	nc     *nats.Conn
	errs   chan error
	closed chan struct{}
}

func connectWatched(t *testing.T, url, creds string) (*watched, error) {
	t.Helper()
	w := &watched{errs: make(chan error, 16), closed: make(chan struct{})}
	nc, err := nats.Connect(url, nats.UserCredentials(creds), nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { w.errs <- err }),
		nats.ClosedHandler(func(*nats.Conn) { close(w.closed) }))
	if err != nil {
		return nil, err
	}
	t.Cleanup(nc.Close)
	w.nc = nc
	return w, nil
}

// refused waits for the server's permission violation naming subject.
func (w *watched) refused(t *testing.T, what, subject string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case err := <-w.errs:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), subject) {
				return
			}
			t.Logf("other async error: %v", err)
		case <-deadline:
			t.Fatalf("%s: the server did not refuse %s", what, subject)
		}
	}
}

func writeCreds(t *testing.T, creds []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.creds")
	if err := os.WriteFile(p, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func recv(t *testing.T, sub *nats.Subscription) *nats.Msg {
	t.Helper()
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no message on %s: %v", sub.Subject, err)
	}
	return m
}

// TestWorkerLeastPrivilege checks, against the NATS server's own permission checks, that a
// worker's credential allows its own task and result subjects and nothing else, and that a
// revocation takes effect at once.
func TestWorkerLeastPrivilege(t *testing.T) {
	s, a := securedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Nobody gets in without credentials.
	if nc, err := nats.Connect(s.URL(), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("the secured server accepted a connection without credentials")
	}
	// The trusted user has JetStream and the registry.
	node, err := nats.Connect(s.URL(), nats.UserCredentials(a.NodeCreds()))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	js, _ := jetstream.New(node)
	members, err := openKV(ctx, js, jetstream.KeyValueConfig{Bucket: names{"c"}.members()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := members.Put(ctx, "n1", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	creds1, err := AddWorker(ctx, js, a, "c", "w1")
	if err != nil {
		t.Fatal(err)
	}
	creds2, err := AddWorker(ctx, js, a, "c", "w2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AddWorker(ctx, js, a, "c", "w1"); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("a second w1: %v", err)
	}
	task1, _ := WorkerSubjects("c", "w1")
	task2, _ := WorkerSubjects("c", "w2")
	out1, out2 := "sonda.c.worker.w1.out.res.n1", "sonda.c.worker.w2.out.res.n1"

	w1, err := connectWatched(t, s.URL(), writeCreds(t, creds1))
	if err != nil {
		t.Fatal(err)
	}
	w2, err := connectWatched(t, s.URL(), writeCreds(t, creds2))
	if err != nil {
		t.Fatal(err)
	}
	own, err := w1.nc.SubscribeSync(task1)
	if err != nil {
		t.Fatal(err)
	}
	stolen, err := w1.nc.SubscribeSync(task2) // the client sends it; the server refuses it
	if err != nil {
		t.Fatal(err)
	}
	w1.refused(t, "subscribe to another worker's tasks", task2)
	for _, subj := range []string{"sonda.c.worker.*.task", "sonda.>", "$KV.sonda_c_members.>", "sonda.c.links.0"} {
		if _, err := w1.nc.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
		w1.refused(t, "subscribe to "+subj, subj)
	}
	w1.nc.Flush()
	// A task for w2 then one for w1: the server delivers a connection's messages in order,
	// so had w1 received w2's task it would come first.
	node.Publish(task2, []byte("for w2"))
	node.Publish(task1, []byte("for w1"))
	if m := recv(t, own); string(m.Data) != "for w1" {
		t.Fatalf("w1 got %q", m.Data)
	}
	if m, err := stolen.NextMsg(0); err == nil {
		t.Fatalf("w1 read w2's task %q", m.Data)
	}

	// Results: w1 may publish under its own result subject only.
	results, err := node.SubscribeSync("sonda.c.worker.*.out.>")
	if err != nil {
		t.Fatal(err)
	}
	forbidden, err := node.SubscribeSync("sonda.c.links.>")
	if err != nil {
		t.Fatal(err)
	}
	node.Flush()
	for _, subj := range []string{out2, "sonda.c.links.0", "$JS.API.STREAM.INFO.KV_sonda_c_members", "$SYS.REQ.CLAIMS.UPDATE", "sonda.c.search.n1"} {
		w1.nc.Publish(subj, []byte("forged"))
		w1.refused(t, "publish to "+subj, subj)
	}
	w1.nc.Publish(out1, []byte("mine"))
	w1.nc.Flush()
	if m := recv(t, results); m.Subject != out1 || string(m.Data) != "mine" {
		t.Fatalf("results: %s %q (a forged result arrived first)", m.Subject, m.Data)
	}
	if m, err := forbidden.NextMsg(0); err == nil {
		t.Fatalf("w1 published a link: %q", m.Data)
	}
	// The membership is out of reach through JetStream too.
	wjs, _ := jetstream.New(w1.nc)
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	if _, err := wjs.KeyValue(short, names{"c"}.members()); err == nil {
		t.Fatal("a worker read the membership bucket")
	}
	cancelShort()

	// Revocation: w1's connection is closed at once, and it cannot come back; w2 is untouched.
	sys, err := nats.Connect(s.URL(), nats.UserCredentials(filepath.Join(a.Dir, SystemCredsFile)))
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if err := RevokeWorker(ctx, js, sys, a, "c", "w1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w1.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the revoked worker's connection stayed open")
	}
	if _, err := connectWatched(t, s.URL(), writeCreds(t, creds1)); err == nil {
		t.Fatal("a revoked credential connected again")
	}
	sub2, err := w2.nc.SubscribeSync(task2)
	if err != nil {
		t.Fatal(err)
	}
	w2.nc.Flush()
	node.Publish(task2, []byte("still here"))
	if m := recv(t, sub2); string(m.Data) != "still here" {
		t.Fatalf("w2 got %q", m.Data)
	}
	list, err := ListWorkers(ctx, js, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].State != WorkerRevoked || list[1].State != WorkerActive {
		t.Fatalf("workers: %+v", list)
	}
}

// TestServerConfFile starts a server from the nats-server.conf InitAuth writes, through the
// configuration parser a standalone nats-server uses: the trusted user reaches JetStream, a
// worker only its subjects, and a revocation pushed over the system account cuts it off.
func TestServerConfFile(t *testing.T) {
	dir := t.TempDir()
	a, err := InitAuth(filepath.Join(dir, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(filepath.Join(a.Dir, ServerConfFile))
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port, opts.StoreDir, opts.NoSigs, opts.NoLog = "127.0.0.1", server.RANDOM_PORT, filepath.Join(dir, "js"), true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("server from nats-server.conf did not start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	node, err := nats.Connect(ns.ClientURL(), nats.UserCredentials(a.NodeCreds()))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	js, _ := jetstream.New(node)
	creds, err := AddWorker(ctx, js, a, "c", "w1")
	if err != nil {
		t.Fatal(err)
	}
	w1, err := connectWatched(t, ns.ClientURL(), writeCreds(t, creds))
	if err != nil {
		t.Fatal(err)
	}
	w1.nc.Publish("sonda.c.links.0", []byte("forged"))
	w1.refused(t, "publish a link", "sonda.c.links.0")
	sys, err := nats.Connect(ns.ClientURL(), nats.UserCredentials(filepath.Join(a.Dir, SystemCredsFile)))
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if err := RevokeWorker(ctx, js, sys, a, "c", "w1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w1.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the revoked worker's connection stayed open")
	}
}

// TestConcurrentRevokes: revocations run at once (each with its own Auth, as separate
// `sonda cluster workers revoke` processes would have) all hold at the server: none
// undoes another by pushing an account that lacks it.
func TestConcurrentRevokes(t *testing.T) {
	s, a := securedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	node, err := nats.Connect(s.URL(), nats.UserCredentials(a.NodeCreds()))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	js, _ := jetstream.New(node)
	const n = 8
	creds := make([]string, n)
	conns := make([]*watched, n)
	for i := range n {
		c, err := AddWorker(ctx, js, a, "c", fmt.Sprintf("w%d", i))
		if err != nil {
			t.Fatal(err)
		}
		creds[i] = writeCreds(t, c)
		if conns[i], err = connectWatched(t, s.URL(), creds[i]); err != nil {
			t.Fatal(err)
		}
	}
	// One more worker, never revoked, keeps its access.
	keep, err := AddWorker(ctx, js, a, "c", "keep")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- func() error {
				own, err := OpenAuth(a.Dir) // read before any revocation, as a process started now would
				if err != nil {
					return err
				}
				sys, err := nats.Connect(s.URL(), nats.UserCredentials(filepath.Join(a.Dir, SystemCredsFile)))
				if err != nil {
					return err
				}
				defer sys.Close()
				return RevokeWorker(ctx, js, sys, own, "c", fmt.Sprintf("w%d", i))
			}()
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Every revoked credential is refused by the server now, and its connection closed.
	for i := range n {
		select {
		case <-conns[i].closed:
		case <-time.After(10 * time.Second):
			t.Errorf("w%d: its connection stayed open", i)
		}
		if w, err := connectWatched(t, s.URL(), creds[i]); err == nil {
			w.nc.Close()
			t.Errorf("w%d: revoked, and the server let it connect again", i)
		}
	}
	if w, err := connectWatched(t, s.URL(), writeCreds(t, keep)); err != nil {
		t.Errorf("the worker nobody revoked was refused: %v", err)
	} else {
		w.nc.Close()
	}
	// The account JWT on disk (what a restarted server preloads) holds every revocation.
	b, err := os.ReadFile(filepath.Join(a.Dir, authAccountJWT))
	if err != nil {
		t.Fatal(err)
	}
	ac, err := jwt.DecodeAccountClaims(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	list, err := ListWorkers(ctx, js, "c")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range list {
		if revoked := ac.Revocations[w.Key] != 0; revoked != (w.Name != "keep") || (w.State == WorkerRevoked) != revoked {
			t.Errorf("%s: state %s, revoked in %s: %v", w.Name, w.State, authAccountJWT, revoked)
		}
	}
}
