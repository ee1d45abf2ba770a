package proxy

import (
	"errors"
	"slices"
	"sync"
	"time"
)

// Errors of the userspace balancer.
var (
	ErrNoService   = errors.New("proxy: missing service entry")
	ErrNoEndpoints = errors.New("proxy: missing endpoints")
)

// balancer is the userspace mode's round robin with ClientIP affinity. Time is passed
// in; it keeps no clock.
type balancer struct {
	mu       sync.Mutex
	services map[ServicePortName]*balancerState
}

type balancerState struct {
	endpoints []string
	index     int
	affinity  bool
	ttl       time.Duration
	clients   map[string]affinityEntry // client IP -> endpoint
}

type affinityEntry struct {
	endpoint string
	lastUsed time.Time
}

func newBalancer() *balancer {
	return &balancer{services: map[ServicePortName]*balancerState{}}
}

// set installs or updates a service port: its endpoints (sorted) and affinity. A
// changed endpoint list restarts the round robin and drops affinity to endpoints
// that are gone.
func (b *balancer) set(name ServicePortName, endpoints []string, affinity bool, ttl time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.services[name]
	if st == nil {
		st = &balancerState{clients: map[string]affinityEntry{}}
		b.services[name] = st
	}
	if !slices.Equal(st.endpoints, endpoints) {
		st.endpoints = append([]string(nil), endpoints...)
		st.index = 0
		for ip, e := range st.clients {
			if !slices.Contains(st.endpoints, e.endpoint) {
				delete(st.clients, ip)
			}
		}
	}
	if st.affinity != affinity || st.ttl != ttl {
		st.clients = map[string]affinityEntry{}
	}
	st.affinity, st.ttl = affinity, ttl
}

// remove forgets the service ports not in keep.
func (b *balancer) retain(keep map[ServicePortName]bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for n := range b.services {
		if !keep[n] {
			delete(b.services, n)
		}
	}
}

// next picks the endpoint for a new connection from clientIP: the remembered one
// under affinity, else the next in round robin.
func (b *balancer) next(name ServicePortName, clientIP string, now time.Time) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.services[name]
	if st == nil {
		return "", ErrNoService
	}
	if len(st.endpoints) == 0 {
		return "", ErrNoEndpoints
	}
	if st.affinity {
		if e, ok := st.clients[clientIP]; ok && now.Sub(e.lastUsed) < st.ttl {
			e.lastUsed = now
			st.clients[clientIP] = e
			return e.endpoint, nil
		}
	}
	ep := st.endpoints[st.index%len(st.endpoints)]
	st.index = (st.index + 1) % len(st.endpoints)
	if st.affinity {
		st.clients[clientIP] = affinityEntry{endpoint: ep, lastUsed: now}
	}
	return ep, nil
}

// forget drops clientIP's affinity, after its endpoint failed to answer.
func (b *balancer) forget(name ServicePortName, clientIP string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.services[name]; st != nil {
		delete(st.clients, clientIP)
	}
}

// cleanup drops affinity entries older than their service's timeout.
func (b *balancer) cleanup(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, st := range b.services {
		for ip, e := range st.clients {
			if now.Sub(e.lastUsed) >= st.ttl {
				delete(st.clients, ip)
			}
		}
	}
}
