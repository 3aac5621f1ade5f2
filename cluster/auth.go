package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Authentication. A cluster that admits volunteer workers (package cluster/volunteer)
// cannot leave its NATS server open: a worker is a stranger's machine. The server then runs
// in NATS's decentralised ("operator") mode: an operator key signs the accounts, the
// cluster's account key signs its users, and every connection presents a user JWT signed
// by that account, whose permissions the server enforces on every publish and subscribe.
// Trusted processes (nodes, `sonda serve`, `sonda cluster …`) share one full user
// (node.creds); each worker gets a user of its own that may subscribe to its task subject
// and publish under its result subject, and nothing else. Revoking a worker adds its key to
// the account's revocation list and sends the re-signed account to the server over the
// system account ($SYS.REQ.CLAIMS.UPDATE): the server drops the worker's connection at once
// and refuses it from then on, with no restart and no reload. The keys live in the auth
// directory (mode 0700, seeds 0600), which is the cluster's secret: whoever holds it can
// issue and revoke credentials.

// Files of an auth directory.
const (
	authOperatorSeed = "operator.nk"
	authOperatorJWT  = "operator.jwt"
	authSystemSeed   = "system.nk"
	authSystemJWT    = "system.jwt"
	authAccountSeed  = "account.nk"
	authAccountJWT   = "account.jwt"
	// NodeCredsFile is the trusted user's credentials, for nodes and the admin commands.
	NodeCredsFile = "node.creds"
	// SystemCredsFile is the system account's user, which pushes revocations to the server.
	SystemCredsFile = "system.creds"
	// ServerConfFile configures a standalone nats-server with the same trust.
	ServerConfFile = "nats-server.conf"
)

// Auth is a cluster's trust root: the operator, the system account and the cluster's
// account, read from (or created in) an auth directory.
type Auth struct {
	Dir      string
	operator nkeys.KeyPair
	opClaims *jwt.OperatorClaims
	opJWT    string
	system   nkeys.KeyPair
	sysJWT   string
	account  nkeys.KeyPair
	acctJWT  string
}

// InitAuth opens the auth directory dir, creating the keys, the accounts and the trusted
// users' credentials the first time.
func InitAuth(dir string) (*Auth, error) {
	if _, err := os.Stat(filepath.Join(dir, authOperatorSeed)); err == nil {
		return OpenAuth(dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster auth: create %s: %w", dir, err)
	}
	a := &Auth{Dir: dir}
	var err error
	if a.operator, err = nkeys.CreateOperator(); err != nil {
		return nil, err
	}
	if a.system, err = nkeys.CreateAccount(); err != nil {
		return nil, err
	}
	if a.account, err = nkeys.CreateAccount(); err != nil {
		return nil, err
	}
	opPub, _ := a.operator.PublicKey()
	sysPub, _ := a.system.PublicKey()
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "sonda"
	oc.SystemAccount = sysPub
	if a.opJWT, err = oc.Encode(a.operator); err != nil {
		return nil, err
	}
	a.opClaims = oc
	sc := jwt.NewAccountClaims(sysPub)
	sc.Name = "SYS"
	if a.sysJWT, err = sc.Encode(a.operator); err != nil {
		return nil, err
	}
	acctPub, _ := a.account.PublicKey()
	ac := jwt.NewAccountClaims(acctPub)
	ac.Name = "SONDA"
	// JetStream is off for an account unless its JWT grants storage; the cluster's nodes
	// need it, and workers reach none of it (their permissions do not include $JS.API).
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1, MaxAckPending: -1, MemoryMaxStreamBytes: -1, DiskMaxStreamBytes: -1}
	if a.acctJWT, err = ac.Encode(a.operator); err != nil {
		return nil, err
	}
	nodeCreds, err := userCreds(a.account, "node", nil)
	if err != nil {
		return nil, err
	}
	sysCreds, err := userCreds(a.system, "system", nil)
	if err != nil {
		return nil, err
	}
	files := []struct {
		name string
		data []byte
	}{
		{authOperatorSeed, seedOf(a.operator)}, {authOperatorJWT, []byte(a.opJWT)},
		{authSystemSeed, seedOf(a.system)}, {authSystemJWT, []byte(a.sysJWT)},
		{authAccountSeed, seedOf(a.account)}, {authAccountJWT, []byte(a.acctJWT)},
		{NodeCredsFile, nodeCreds}, {SystemCredsFile, sysCreds},
	}
	for _, f := range files {
		if err := writeSecret(filepath.Join(dir, f.name), f.data); err != nil {
			return nil, err
		}
	}
	if err := a.writeServerConf(); err != nil {
		return nil, err
	}
	return a, nil
}

// OpenAuth reads an auth directory InitAuth created.
func OpenAuth(dir string) (*Auth, error) {
	a := &Auth{Dir: dir}
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("cluster auth: %w (is %s the directory `sonda nats --auth` created?)", err, dir)
		}
		return strings.TrimSpace(string(b)), nil
	}
	key := func(name string) (nkeys.KeyPair, error) {
		s, err := read(name)
		if err != nil {
			return nil, err
		}
		kp, err := nkeys.FromSeed([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("cluster auth: %s: %w", filepath.Join(dir, name), err)
		}
		return kp, nil
	}
	var err error
	if a.operator, err = key(authOperatorSeed); err != nil {
		return nil, err
	}
	if a.system, err = key(authSystemSeed); err != nil {
		return nil, err
	}
	if a.account, err = key(authAccountSeed); err != nil {
		return nil, err
	}
	if a.opJWT, err = read(authOperatorJWT); err != nil {
		return nil, err
	}
	if a.opClaims, err = jwt.DecodeOperatorClaims(a.opJWT); err != nil {
		return nil, fmt.Errorf("cluster auth: %s: %w", authOperatorJWT, err)
	}
	if a.sysJWT, err = read(authSystemJWT); err != nil {
		return nil, err
	}
	if a.acctJWT, err = read(authAccountJWT); err != nil {
		return nil, err
	}
	return a, nil
}

// NodeCreds is the path of the trusted user's credentials file.
func (a *Auth) NodeCreds() string { return filepath.Join(a.Dir, NodeCredsFile) }

// AccountKey is the public key of the cluster's account.
func (a *Auth) AccountKey() string { k, _ := a.account.PublicKey(); return k }

// WorkerSubjects are the subjects worker name of cluster may use: it subscribes to task and
// publishes under out (a wildcard).
func WorkerSubjects(cluster, name string) (task, out string) {
	base := "sonda." + cluster + ".worker." + name
	return base + ".task", base + ".out.>"
}

// IssueWorker signs a credential for worker name of cluster: a fresh user key whose
// permissions allow subscribing to the worker's task subject and publishing under its
// result subject, nothing else (no JetStream, no other worker's subjects, no replies to
// inboxes). It returns the credentials file's content and the user's public key.
func (a *Auth) IssueWorker(cluster, name string) (creds []byte, pub string, err error) {
	if !nameRe.MatchString(name) {
		return nil, "", fmt.Errorf("worker name %q: use 1 to 64 letters, digits, '-' or '_'", name)
	}
	task, out := WorkerSubjects(cluster, name)
	perms := &jwt.Permissions{}
	perms.Sub.Allow.Add(task)
	perms.Pub.Allow.Add(out)
	user, err := nkeys.CreateUser()
	if err != nil {
		return nil, "", err
	}
	creds, err = signUser(a.account, user, cluster+"/"+name, perms)
	if err != nil {
		return nil, "", err
	}
	pub, _ = user.PublicKey()
	return creds, pub, nil
}

// Revoke revokes the user key pub in the cluster's account and, when nc is a connection
// with the system account's credentials, pushes the re-signed account to the server, which
// closes the user's connections at once. The account JWT in the auth directory is updated
// first, so a server started later preloads the revocation too.
//
// Revocations are serialised by a lock on the auth directory (several `workers revoke` at
// once, in one process or several): each re-reads the account JWT under the lock, adds its
// key and pushes the result before it lets the next one in. Otherwise each would sign an
// account holding only its own revocation, and the last pushed would undo the others at
// the server (which keeps the newest account JWT it is sent).
func (a *Auth) Revoke(nc *nats.Conn, pub string) error {
	unlock, err := lockDir(a.Dir)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := os.ReadFile(filepath.Join(a.Dir, authAccountJWT))
	if err != nil {
		return fmt.Errorf("cluster auth: %w", err)
	}
	a.acctJWT = strings.TrimSpace(string(cur))
	ac, err := jwt.DecodeAccountClaims(a.acctJWT)
	if err != nil {
		return fmt.Errorf("cluster auth: %s: %w", filepath.Join(a.Dir, authAccountJWT), err)
	}
	ac.RevokeAt(pub, time.Now().Add(time.Second)) // every JWT of that key issued until now
	token, err := ac.Encode(a.operator)
	if err != nil {
		return err
	}
	if err := writeSecret(filepath.Join(a.Dir, authAccountJWT), []byte(token)); err != nil {
		return err
	}
	a.acctJWT = token
	if err := a.writeServerConf(); err != nil {
		return err
	}
	if nc == nil {
		return nil
	}
	return PushAccount(nc, token)
}

// PushAccount sends an account JWT to the server (the system account's claims update) and
// checks the server's answer.
func PushAccount(nc *nats.Conn, token string) error {
	msg, err := nc.Request("$SYS.REQ.CLAIMS.UPDATE", []byte(token), 5*time.Second)
	if err != nil {
		return fmt.Errorf("cluster auth: the server did not take the account update (was it started with --auth, and is %s the system account's?): %w", SystemCredsFile, err)
	}
	var resp struct {
		Data *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"data"`
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("cluster auth: the server answered the account update with %q", msg.Data)
	}
	if resp.Error != nil {
		return fmt.Errorf("cluster auth: the server refused the account update: %s", resp.Error.Description)
	}
	return nil
}

// AccountJWT is the current signed JWT of the cluster's account.
func (a *Auth) AccountJWT() string { return a.acctJWT }

// configure puts the trust root into a server's options: trusted operator, system account,
// and a directory resolver (in resolverDir) holding both accounts, which takes the account
// updates Revoke pushes and keeps them across restarts.
func (a *Auth) configure(opts *server.Options, resolverDir string) error {
	res, err := server.NewDirAccResolver(resolverDir, 0, time.Minute, server.NoDelete)
	if err != nil {
		return fmt.Errorf("cluster auth: account resolver in %s: %w", resolverDir, err)
	}
	sysPub, _ := a.system.PublicKey()
	for pub, token := range map[string]string{sysPub: a.sysJWT, a.AccountKey(): a.acctJWT} {
		if err := res.Store(pub, token); err != nil { // kept when the resolver has a newer one
			return fmt.Errorf("cluster auth: preload account %s: %w", pub, err)
		}
	}
	opts.TrustedOperators = []*jwt.OperatorClaims{a.opClaims}
	opts.SystemAccount = sysPub
	opts.AccountResolver = res
	return nil
}

// writeServerConf writes a nats-server configuration with this trust, for users who run a
// standalone nats-server (nats-server -c DIR/nats-server.conf).
func (a *Auth) writeServerConf() error {
	sysPub, _ := a.system.PublicKey()
	acctPub := a.AccountKey()
	conf := fmt.Sprintf(`# Written by sonda (cluster auth); nats-server -c %[1]s
# Add listen, jetstream store_dir etc. as needed. Account updates (revocations) reach the
# server through the system account; the resolver keeps them in resolver_dir.
operator: %[2]q
system_account: %[3]s
jetstream: enabled
resolver: {
  type: full
  dir: %[4]q
  allow_delete: false
}
resolver_preload: {
  %[3]s: %[5]q
  %[6]s: %[7]q
}
`, filepath.Join(a.Dir, ServerConfFile), filepath.Join(a.Dir, authOperatorJWT), sysPub,
		filepath.Join(a.Dir, "resolver"), a.sysJWT, acctPub, a.acctJWT)
	return writeSecret(filepath.Join(a.Dir, ServerConfFile), []byte(conf))
}

// signUser signs a user of account with perms (nil: no restriction) and formats a creds file.
func signUser(account, user nkeys.KeyPair, name string, perms *jwt.Permissions) ([]byte, error) {
	pub, _ := user.PublicKey()
	uc := jwt.NewUserClaims(pub)
	uc.Name = name
	if perms != nil {
		uc.Permissions = *perms
	}
	token, err := uc.Encode(account)
	if err != nil {
		return nil, err
	}
	seed, err := user.Seed()
	if err != nil {
		return nil, err
	}
	return jwt.FormatUserConfig(token, seed)
}

func userCreds(account nkeys.KeyPair, name string, perms *jwt.Permissions) ([]byte, error) {
	user, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	return signUser(account, user, name, perms)
}

func seedOf(kp nkeys.KeyPair) []byte { s, _ := kp.Seed(); return s }

// authLockFile is the lock of the auth directory's read-modify-writes (Revoke).
const authLockFile = ".lock"

// lockDir takes the exclusive lock of the auth directory dir, waiting for it. The lock is
// flock(2) on a file of its own: held per open file, so it serialises goroutines of one
// process as well as processes, and the kernel drops it when a holder dies.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, authLockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cluster auth: lock %s: %w", dir, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cluster auth: lock %s: %w", dir, err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// writeSecret writes a key or credential readable by its owner only, atomically.
func writeSecret(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("cluster auth: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cluster auth: %w", err)
	}
	return nil
}
