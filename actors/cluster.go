package actors

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"

	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/persistence"
)

// A replicated control plane (issue 13): every master replica runs an actor system,
// and the systems are the members of one actor cluster over protoactor's remote
// transport. Its members are the store's Raft configuration as the server sees it
// (the server calls SetMembers), not a second membership system.
//
//   - The actors of the placed kinds (PlacedKinds: replication controllers,
//     namespaces, services and nodes) are spread over the live members by
//     identity: each object's owner is the member that wins a rendezvous hash of
//     its key. A manager routes a
//     request for an object it does not own to the owner's manager of the same kind;
//     the owner's object actor answers the original sender directly.
//   - Every other kind, and the singletons (the scheduler, the evictor, the pod
//     garbage collector), run on the leader only. On another member the manager of
//     such a kind keeps no actors and forwards every request to the leader's; the
//     node actors of other members send the evictor their requests over the wire,
//     through the supervisor of the member that runs it (singletonAt).
//   - When the members change, each manager of a kind that moves (movingKinds)
//     stops the actors it no longer owns and starts those it now owns, which load
//     their object from the store (every replica has all of it). Two members may
//     briefly both run one object's actor: every write it makes carries its
//     precondition (the revision it last saw) through the Raft log, so the second
//     one gets a conflict, and an RC's pod creates use names derived from the RC and
//     a slot, so a second create of the same pod fails with AlreadyExists instead of
//     making an extra pod.
//   - Feeds run on every member; a resync for an object owned elsewhere is dropped
//     (its owner's own feed saw the same change).
//
//   - A member may have a role (Member.Role): the book's kube-controller-manager
//     and kube-scheduler join as members of role RoleControllers or RoleScheduler.
//     While one of a role is live, the actors of that role run on it and on no
//     server: every controller of kube-controller-manager (controllerKinds: the
//     replication controllers, namespaces, services and their endpoints, nodes,
//     resource quotas, service accounts and their tokens, persistent volumes and
//     claims; and the singletons of singletonRoles: the evictor and the pod GC) on
//     the first live member of RoleControllers, the scheduler on the first of
//     RoleScheduler ("first": in the order the members are given, the order they
//     joined). Every other member of a role is a standby and hosts nothing; a
//     member with a role hosts nothing but its role's actors. When none of a role
//     is live, its actors run where they run without roles. A singleton starts and
//     stops with the view (the supervisor follows it: system.go); its state is
//     rebuilt from the store.
//
// Messages that cross members are wire messages (wire.go).

// ClusterOptions make a system one member of a replicated control plane.
type ClusterOptions struct {
	// Name is this member's name (its replica name).
	Name string
	// Address is host:port of this member's actor transport: it binds it and the
	// other members reach it there.
	Address string
	// Leader says this member leads: it runs every kind and the singletons.
	// Otherwise it hosts only its share of the placed kinds' actors.
	Leader bool
	// Members and LeaderName are the first view of the cluster (see SetMembers),
	// in force before any actor starts.
	Members    []Member
	LeaderName string
	// Role is this member's role ("" for a server; RoleControllers, RoleScheduler).
	Role string
}

// Member is one member of the actor cluster: its name, transport address and role.
type Member struct {
	Name    string
	Address string
	Role    string // "", RoleControllers or RoleScheduler
}

// The roles of members that host one part of the control plane only.
const (
	RoleControllers = "controllers" // kube-controller-manager: controllerKinds, the evictor and the pod GC
	RoleScheduler   = "scheduler"   // kube-scheduler: the scheduler
)

// singletonRoles says which role's member runs each singleton when one is live
// (else the leader runs it). The evictor moves with the node actors; a node actor
// on another member sends it its requests over the wire (singletonAt).
var singletonRoles = map[string]string{schedulerName: RoleScheduler, podGCName: RoleControllers, node.EvictorName: RoleControllers}

// PlacedKinds are the kinds whose actors are spread over the members by identity:
// the controllers that act through requests to other actors. Services and nodes
// have allocators (cluster IPs and node ports, pod CIDRs; managerext.go): each
// member's allocates for the objects it hosts, and the store's claims
// (persistence/claims.go) refuse a value that another member gave out.
var PlacedKinds = []string{"replicationcontrollers", "namespaces", "services", "nodes"}

// maxHops bounds how often a request is forwarded between members while their views
// of the placement differ; past it the request fails (errUnavailable) and its sender
// retries.
const maxHops = 3

// errUnavailable: the member that should handle a request is not known now.
var errUnavailable = fmt.Errorf("%w: the object's member is not known now (the members are changing)", ErrTimeout)

// placement is one view of the members: who is alive, who leads, where they are.
type placement struct {
	self    string
	leader  string              // "" when no leader is known
	members []string            // the live members without a role, sorted
	roles   map[string][]string // the live members of each role, in the order given
	addr    map[string]string
}

// active is the member that hosts role's actors: the first live one of the role.
func (p *placement) active(role string) string {
	if l := p.roles[role]; len(l) > 0 {
		return l[0]
	}
	return ""
}

// owner is the member that hosts the actor of key: the live member with the highest
// hash of (member, key), so a member's leaving moves only its own objects.
func (p *placement) owner(key persistence.Key) string {
	k := fnv.New64a()
	_, _ = k.Write([]byte(key.Resource + "/" + key.Namespace + "/" + key.Name))
	kh := mix64(k.Sum64())
	best, bestHash := "", uint64(0)
	for _, m := range p.members {
		h := fnv.New64a()
		_, _ = h.Write([]byte(m))
		if v := mix64(h.Sum64() ^ kh); best == "" || v > bestHash {
			best, bestHash = m, v
		}
	}
	return best
}

// mix64 is splitmix64's finalizer: every input bit moves every output bit, so the
// hashes of one key with each member compare fairly.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// cluster is a system's membership state.
type cluster struct {
	self   string
	leader bool   // this member leads (fixed for the system's life)
	role   string // this member's role ("" for a server)
	view   atomic.Pointer[placement]
}

func placed(resource string) bool { return slices.Contains(PlacedKinds, resource) }

// movingKinds are the kinds whose actors move when the members change: the placed
// kinds and the controllers of a member of RoleControllers.
func movingKinds() []string {
	out := append([]string(nil), PlacedKinds...)
	for _, r := range controllerKinds {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// leads tells whether this system runs the leader's actors: every kind and the
// singletons (always, without a cluster).
func (e *env) leads() bool { return e.cluster == nil || e.cluster.leader }

// controllerKinds are the kinds whose actors a member of RoleControllers hosts
// while it lives: the controllers Kubernetes 1.0's kube-controller-manager runs
// (replication, namespace, endpoints (each service's actor keeps its endpoints),
// node, resource quota, service account and token, persistent volume binder and
// recycler). The member's services and nodes managers allocate cluster IPs, node
// ports and pod CIDRs with the ranges the servers publish (cli/member.go), and the
// store's claims check them as the servers' do. Without such a member the placed
// kinds among them are spread over the servers, the others run on the leader.
var controllerKinds = []string{"replicationcontrollers", "namespaces", "services", "nodes", "resourcequotas",
	"serviceaccounts", "persistentvolumes", "persistentvolumeclaims"}

// roleKind tells whether a member of RoleControllers hosts resource's actors.
func roleKind(resource string) bool { return slices.Contains(controllerKinds, resource) }

// hosts tells whether this system's manager of resource keeps actors at all.
func (e *env) hosts(resource string) bool {
	if e.leads() {
		return true
	}
	switch e.cluster.role {
	case "":
		return placed(resource)
	case RoleControllers:
		return roleKind(resource)
	}
	return false
}

// runs tells whether this system runs the singleton name now: on the active member
// of its role when one is live, else on the leader.
func (e *env) runs(name string) bool {
	c := e.cluster
	if c == nil {
		return true
	}
	if role := singletonRoles[name]; role != "" {
		if p := c.view.Load(); p != nil {
			if m := p.active(role); m != "" {
				return m == c.self
			}
		}
		if c.role != "" { // no view yet: a member with a role waits for one
			return false
		}
	}
	return c.leader
}

// where says where the actor of key runs: here (local), or at the transport address
// of another member ("" when that member is not known now).
func (e *env) where(key persistence.Key) (addr string, local bool) {
	c := e.cluster
	if c == nil {
		return "", true
	}
	p := c.view.Load()
	if p == nil { // no view yet: a server hosts its placed kinds' requests itself
		return "", c.leader || placed(key.Resource) && c.role == ""
	}
	var m string
	switch {
	case roleKind(key.Resource) && p.active(RoleControllers) != "":
		m = p.active(RoleControllers)
	case placed(key.Resource):
		if m = p.owner(key); m == "" {
			return "", c.role == "" // no view yet: a server hosts what it is asked for
		}
	case c.leader:
		return "", true
	default:
		m = p.leader
	}
	if m == c.self {
		return "", true
	}
	return p.addr[m], false
}

// singletonAt says where the singleton name runs: here, or at the transport address
// of the member that runs it ("" when that member is not known now).
func (e *env) singletonAt(name string) (addr string, here bool) {
	c := e.cluster
	if c == nil {
		return "", true
	}
	p := c.view.Load()
	if p == nil {
		return "", c.leader
	}
	m := p.leader
	if role := singletonRoles[name]; role != "" && p.active(role) != "" {
		m = p.active(role)
	}
	if m == c.self {
		return "", true
	}
	return p.addr[m], false
}

// local tells whether the actor of key runs on this member.
func (e *env) local(key persistence.Key) bool {
	_, l := e.where(key)
	return l
}

// startRemote starts the actor transport of a cluster member.
func startRemote(sys *actor.ActorSystem, opts *ClusterOptions) (r *remote.Remote, err error) {
	host, port, err := net.SplitHostPort(opts.Address)
	if err != nil {
		return nil, fmt.Errorf("actor address %q: %w", opts.Address, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("actor address %q: %w", opts.Address, err)
	}
	r = remote.NewRemote(sys, remote.Configure(host, p, remote.WithAdvertisedHost(opts.Address)))
	defer func() { // remote.Start panics when it cannot listen
		if v := recover(); v != nil {
			r, err = nil, fmt.Errorf("actor transport on %s: %v", opts.Address, v)
		}
	}()
	r.Start()
	return r, nil
}

// SetMembers gives the system the live members of the cluster and the leader's name
// ("" when none is known). Managers of the placed kinds then stop the actors they no
// longer own and start those they now own. Without a cluster it does nothing.
func (s *System) SetMembers(members []Member, leader string) error {
	c := s.env.cluster
	if c == nil {
		return nil
	}
	p, err := newPlacement(c.self, members, leader)
	if err != nil {
		return err
	}
	if old := c.view.Load(); old != nil && old.leader == p.leader && slices.Equal(old.members, p.members) &&
		sameAddrs(old.addr, p.addr) && sameRoles(old.roles, p.roles) {
		return nil
	}
	c.view.Store(p)
	for _, r := range movingKinds() {
		if pid, ok := s.env.managers[r]; ok {
			s.system.Root.Send(pid, &placementChanged{})
		}
	}
	s.system.Root.Send(s.root, &placementChanged{}) // the singletons follow the view
	return nil
}

func newPlacement(self string, members []Member, leader string) (*placement, error) {
	p := &placement{self: self, leader: leader, addr: make(map[string]string, len(members)), roles: map[string][]string{}}
	for _, m := range members {
		if m.Name == "" || m.Address == "" {
			return nil, errors.New("actors: a member needs a name and an address")
		}
		switch m.Role {
		case "":
			p.members = append(p.members, m.Name)
		case RoleControllers, RoleScheduler:
			p.roles[m.Role] = append(p.roles[m.Role], m.Name)
		default:
			return nil, fmt.Errorf("actors: member %s: unknown role %q", m.Name, m.Role)
		}
		p.addr[m.Name] = m.Address
	}
	slices.Sort(p.members)
	return p, nil
}

func sameRoles(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(b[k], v) {
			return false
		}
	}
	return true
}

func sameAddrs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Owner names the member that hosts the actor of key in the current view ("" without
// a cluster or a view): the placement, for tests and the members listing.
func (s *System) Owner(key persistence.Key) string {
	c := s.env.cluster
	if c == nil {
		return ""
	}
	if p := c.view.Load(); p != nil {
		if m := p.active(RoleControllers); m != "" && roleKind(key.Resource) {
			return m
		}
		if placed(key.Resource) {
			return p.owner(key)
		}
		return p.leader
	}
	return ""
}

// Runs tells whether this system runs the singleton actor name ("scheduler",
// "podgc", "evictor") now: for tests and the members listing.
func (s *System) Runs(name string) bool { return s.env.runs(name) && s.env.singletonAlive(name) }

// placementChanged tells a placed kind's manager that the members changed.
type placementChanged struct{}

// membersChanged tells an object actor that the members changed: answers it awaits
// from another member may never come.
type membersChanged struct{}
