package cluster

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerOptions configure an embedded NATS server (`sonda nats`, `sonda demo --nodes`).
type ServerOptions struct {
	// Addr is the HOST:PORT clients connect to (default 127.0.0.1:4222; port 0 picks one).
	Addr string
	// Dir is where JetStream keeps its streams: the cluster's routed links, URL states and
	// membership. It must survive a restart of the server for the cluster to resume.
	Dir string
	// Name names the server in its logs and monitoring (default "sonda").
	Name string
	// Auth, when set, makes the server require credentials signed by this trust root (the
	// operator mode that volunteer workers need); nil leaves the server open to anyone who
	// can reach it, for a cluster on a trusted network.
	Auth *Auth
	// Logf, when set, receives the server's notices and errors (nil: silent).
	Logf func(format string, args ...any)
	// SyncInterval is how often JetStream syncs its files and compacts the blocks that
	// superseded messages left more than half empty (0: the server's default, 2 minutes).
	SyncInterval time.Duration
}

// Server is an embedded NATS server with JetStream.
type Server struct{ ns *server.Server }

// StartServer starts a NATS server with JetStream enabled and waits until it accepts
// clients. The server is the same code as a standalone nats-server of the version sonda
// embeds (see go.mod); nodes cannot tell them apart.
func StartServer(o ServerOptions) (*Server, error) {
	if o.Dir == "" {
		return nil, errors.New("cluster: the NATS server needs a data directory for JetStream (--data DIR)")
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:4222"
	}
	host, portStr, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("cluster: NATS address %q: want HOST:PORT: %w", o.Addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("cluster: NATS address %q: port %q is not a number from 0 to 65535", o.Addr, portStr)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	if o.Name == "" {
		o.Name = "sonda"
	}
	opts := &server.Options{
		ServerName: o.Name, Host: host, Port: port, JetStream: true, StoreDir: o.Dir,
		NoSigs: true, NoLog: o.Logf == nil, MaxPayload: 8 << 20, SyncInterval: o.SyncInterval,
	}
	if o.Auth != nil {
		if err := o.Auth.configure(opts, filepath.Join(o.Dir, "accounts")); err != nil {
			return nil, err
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: NATS server: %w", err)
	}
	if o.Logf != nil {
		ns.SetLogger(serverLogger(o.Logf), false, false)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("cluster: NATS server on %s did not start within 30s (is the port taken?)", o.Addr)
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		return nil, fmt.Errorf("cluster: JetStream did not start in %s (is the directory writable?)", o.Dir)
	}
	return &Server{ns: ns}, nil
}

// URL is the address clients give to --nats, e.g. nats://127.0.0.1:4222.
func (s *Server) URL() string { return s.ns.ClientURL() }

// Shutdown stops the server; JetStream's files stay in Dir for the next start.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// serverLogger adapts a printf function to the server's logger interface.
type serverLogger func(format string, args ...any)

func (l serverLogger) Noticef(format string, v ...any) { l(format, v...) }
func (l serverLogger) Warnf(format string, v ...any)   { l("warning: "+format, v...) }
func (l serverLogger) Fatalf(format string, v ...any)  { l("fatal: "+format, v...) }
func (l serverLogger) Errorf(format string, v ...any)  { l("error: "+format, v...) }
func (l serverLogger) Debugf(string, ...any)           {}
func (l serverLogger) Tracef(string, ...any)           {}
