// Package cluster owns sonda's cluster mode: crawler nodes that share one crawl through a
// NATS JetStream server. It owns the membership of nodes, the mapping of hosts to the node
// that crawls them, the routing of discovered links to that node, the record from which a
// node rebuilds the queues of hosts it takes over, and the detection that the whole
// cluster has finished. The crawl loop (package crawl) knows nothing of NATS: a Node fills
// its Router and Gate interfaces.
//
// # Ownership
//
// Hosts are grouped into a fixed number of partitions by a hash of their registrable
// domain (so www.example.org and docs.example.org go together, and robots.txt and
// politeness of one site stay with one node). Each partition is mapped to a live node by
// rendezvous hashing over the membership, so a node joining or leaving moves only its own
// share. Ownership is recorded in a KV bucket with compare-and-set: a node takes a
// partition only when the bucket says it is free or its owner's membership has expired,
// and an owner that must hand a partition over (a node joined) first stops fetching from
// it, lets its requests finish and its outbox drain, then frees it.
//
// # Fencing
//
// A node's membership is a key with a TTL that the node refreshes with compare-and-set
// every TTL/6. A node fetches only until half the TTL after the last refresh the server
// accepted (measured on its own monotonic clock from before it sent the refresh), while
// other nodes may take its partitions only once the server has expired its key, a full
// TTL after that refresh arrived. So a paused or cut-off node has stopped fetching before
// any other node can start. A request in flight runs in a context that ends at three
// quarters of the TTL after that refresh (crawl.Gate.Fence), so a slow answer or a
// process stalled by a loaded machine ends its request before the next owner may start.
// The gate is asked once more as the request's bytes are written to the connection
// (fetch.WithSendGuard), so a process stopped between the check and the send sends
// nothing once it resumes. When a paused node comes back, its refresh fails (its key is
// gone) and it rejoins as a new incarnation that owns nothing.
//
// # Epochs: one writer per partition's record
//
// A node that takes a partition first opens an epoch on it: a message on the partition's
// epoch subject in the state stream, published only if no other came after the last one
// it read. Every state it then writes about the partition (admitted URLs, page outcomes,
// host rests) expects that message to still be the last on the subject, so once another
// node opened a later epoch, JetStream refuses what the previous owner still sends (a
// node that was paused, or whose relay lagged): the record only ever holds the current
// owner's view, and a rebuild, which reads it after opening the epoch, misses nothing.
// A node whose write is refused forgets the partition (and takes it again with a new
// epoch if the partition table still says it is its own). Outcomes of leases that began
// under an earlier tenure are not recorded at all: the partition's owner fetches those
// URLs again.
//
// # Links and durability
//
// Every URL the crawl discovers goes to the partition's owner, even when that is this
// node: the crawler records it in an outbox in the same Pebble batch as the page it was
// found on, a relay publishes the outbox to JetStream with message ids (so a retry is not a
// duplicate), and the owner admits it idempotently (its seen set), first recording the URL
// in the state stream, then in its own frontier, and only then acknowledges the
// message (the frontier's write is not synced: the state stream is the durable record,
// and a node rebuilds its queues from it, never from its own disk, after a crash). Host
// rests are recorded only when they last until another node could take the host over
// (see Node.Route). What became of each URL (queued, scheduled again, done) and each host's rest time
// are kept in the state stream, one message per URL and per host (a compacting log). A node
// that takes a partition over rebuilds the partition's queues from it, so nothing queued is
// lost even when a node's disk never comes back; at most the pages that node had in flight
// or not yet relayed are fetched again, at most Options.Unconfirmed pages: a node starts
// no request while that many are in flight or unacknowledged by JetStream. The relay
// publishes a page's state only once the links recorded before it are stored: a state
// stored alone (the two streams store independently) would make the page's next owner
// take it as done while its links were still only in a node that may never come back.
// The relay reads the outbox every relayEvery (100 ms) while it counts records there (an
// idle node reads nothing), taking every page completed since in one round (one read, one
// write to the server, two batch commits), and at once when a lease waits at the
// Unconfirmed bound: a discovered URL reaches its owner up to that much later, and a page
// costs a fraction of a round.
//
// # In-links
//
// Each page's links travel the same way (outbox, then the state stream), as one message
// on a compacting subject of the page's own, which replaces what the page said before
// wherever it was fetched; every node records in its link graph the links into each
// partition it ever fetched a page of (from its first page there): the in-link counts and
// anchor texts its pages rank with are those of the whole cluster, as one machine would
// have them (see links.go). One ordered consumer per node reads every page's message;
// starting to follow one more partition replays the stream for that partition. A node
// whose crawler records its own pages' links in that graph skips the ones its current run
// sent. Links an earlier sonda stored by partition are turned into one message per page
// before any node reads them (oldedges.go).
//
// # PageRank
//
// One node, the live one with the lowest id, ranks the whole cluster's graph (every page's
// links, read from the state stream) and publishes each partition's ranks; each node
// stores those of the partitions it records links of, so pages rank by the link prior one
// machine holding every page would give them (see ranks.go).
//
// # Message ids
//
// Outbox records are published with message ids made of the node, the record's number
// and the time it was written (the relay reads on from the first record it has not
// settled, see outbox.low): after a crash the number may run behind numbers already
// published, and a reused id would make JetStream drop a new record as a duplicate.
//
// # Termination
//
// With ExitWhenDone, a node declares the cluster done from successive looks at it, each
// with every live member reporting idle (nothing queued, in flight, unrelayed or moving,
// and its crawler started), every partition served and no routed URL waiting in
// JetStream: done once nothing moved since a first look (the same members, the same sums
// of their counters and the same last sequences of the links and state streams: every
// routed URL, admission, page outcome, host rest and epoch writes one) and every member
// reported idle again in a heartbeat computed after that look. A heartbeat stored after
// the look may have been computed before it (a heartbeat delayed by a loaded machine or a
// NATS restart, by a member that admitted a URL in between); heartbeats are a chain of
// compare-and-set writes, so the second one stored after the look (by the membership
// bucket's revision, read after the streams) is the one that counts. A member's report is
// read in an order that cannot miss work moving inside the node (see Node.info).
//
// # NATS names
//
// Everything lives under a cluster name (default "sonda"), so several clusters can share a
// server:
//
//	subject sonda.<cluster>.links.<partition>             routed URLs (stream sonda_<cluster>_links, work queue)
//	subject sonda.<cluster>.url.<partition>.<urlkey>      last state of a URL (stream sonda_<cluster>_state)
//	subject sonda.<cluster>.rest.<partition>.<host hex>   a host's rest time (stream sonda_<cluster>_state)
//	subject sonda.<cluster>.epoch.<partition>             the partition's current owner tenure (stream sonda_<cluster>_state)
//	subject sonda.<cluster>.edges.<page key>              a page's links, with anchors (stream sonda_<cluster>_state)
//	KV sonda_<cluster>_members                            live nodes: key = node id, value = MemberInfo (JSON), TTL
//	KV sonda_<cluster>_parts                              partition owners: key p<partition> = "node/incarnation"
//	KV sonda_<cluster>_seeds                              the cluster's seeds (scope follows them)
//	subject sonda.<cluster>.ranks.<run>.<partition>.<n>   chunk n of a PageRank run's ranks of a partition (stream sonda_<cluster>_ranks)
//	KV sonda_<cluster>_ranks                              key run: the last PageRank run published (its id, chunks, summary)
//
// LiveMembers lists the members for other packages (the scatter-gather search asks each
// node on sonda.<cluster>.search.<node id>).
package cluster
