package cluster

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"net"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// DefaultCluster is the cluster name when none is given.
const DefaultCluster = "sonda"

// DefaultPartitions is how many partitions a new cluster gets. It is fixed when the first
// node creates the cluster: more partitions spread hosts more evenly over more nodes and
// cost a consumer each on the server.
const DefaultPartitions = 64

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// CheckName validates a cluster name or node id: letters, digits, '-' and '_' (they
// become parts of NATS subjects and bucket names).
func CheckName(what, name string) error {
	if !nameRe.MatchString(name) {
		return fmt.Errorf("cluster: %s %q: use 1 to 64 letters, digits, '-' or '_'", what, name)
	}
	return nil
}

// names are the NATS subjects, streams and buckets of one cluster.
type names struct{ cluster string }

func (n names) members() string     { return "sonda_" + n.cluster + "_members" }
func (n names) parts() string       { return "sonda_" + n.cluster + "_parts" }
func (n names) seeds() string       { return "sonda_" + n.cluster + "_seeds" }
func (n names) linksStream() string { return "sonda_" + n.cluster + "_links" }
func (n names) stateStream() string { return "sonda_" + n.cluster + "_state" }
func (n names) ranks() string       { return "sonda_" + n.cluster + "_ranks" }
func (n names) prefix() string      { return "sonda." + n.cluster + "." }
func (n names) rankRun(id string) string {
	return n.prefix() + "ranks." + id + ".>"
}
func (n names) rankChunk(id string, p, chunk int) string {
	return n.prefix() + "ranks." + id + "." + strconv.Itoa(p) + "." + strconv.Itoa(chunk)
}
func (n names) links(p int) string { return n.prefix() + "links." + strconv.Itoa(p) }
func (n names) urlState(p int, key [16]byte) string {
	return n.prefix() + "url." + strconv.Itoa(p) + "." + hex.EncodeToString(key[:])
}
func (n names) rest(p int, host string) string {
	return n.prefix() + "rest." + strconv.Itoa(p) + "." + hex.EncodeToString([]byte(host))
}
func (n names) epoch(p int) string { return n.prefix() + "epoch." + strconv.Itoa(p) }

// edges is the subject of a page's links (all of them, one message per page).
func (n names) edges(srcKey []byte) string { return n.prefix() + "edges." + hex.EncodeToString(srcKey) }

// allEdges matches every page's links subject, and only those: the links by partition of
// an earlier format (edges.<partition>.<page key>, partEdges) have one token more.
func (n names) allEdges() string { return n.prefix() + "edges.*" }

// partEdges matches the subjects of the earlier format: a page's links into one partition
// (edges.<partition>.<page key>), which migrateEdges turns into one message per page.
func (n names) partEdges() string { return n.prefix() + "edges.*.*" }

func partKey(p int) string { return "p" + strconv.Itoa(p) }

// DomainOf is the registrable domain of a host key (host or host:port): the unit that
// never splits across nodes.
func DomainOf(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if net.ParseIP(strings.Trim(host, "[]")) != nil {
		return host
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host
}

// PartitionOf maps a host key to one of n partitions by its registrable domain.
func PartitionOf(host string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(DomainOf(host)))
	return int(h.Sum64() % uint64(n))
}

// Owner picks the member that should own partition p: the highest rendezvous weight
// (a hash of the partition and the member). When a member leaves, only its partitions
// move; when one joins, it takes about 1/len(members) of each other member's.
func Owner(p int, members []string) string {
	best, bestW := "", uint64(0)
	for _, m := range members {
		h := fnv.New64a()
		h.Write([]byte(m))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(p)))
		w := mix(h.Sum64())
		if best == "" || w > bestW || w == bestW && m < best {
			best, bestW = m, w
		}
	}
	return best
}

// mix is a 64-bit finalizer (splitmix64): FNV alone leaves related inputs correlated.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
