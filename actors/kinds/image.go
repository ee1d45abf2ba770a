package kinds

import (
	"sync"

	"github.com/distribution/reference"
)

// defaultPullAlways reports whether the API server defaults an image's pull policy to
// Always rather than IfNotPresent. As Kubernetes does (its parsers.ParseImageName):
// the reference is parsed as Docker normalizes it; a tag of "latest", or neither tag
// nor digest, means Always; any other tag, a digest alone, or a reference that does
// not parse (validation reports it) means IfNotPresent. Parsing runs the reference
// grammar's regular expressions (a few percent of a pod create's CPU), and a cluster
// uses few images, so the answers are remembered (pullPolicies).
func defaultPullAlways(image string) bool {
	if always, ok := pullPolicies.get(image); ok {
		return always
	}
	always := parsePullAlways(image)
	pullPolicies.put(image, always)
	return always
}

func parsePullAlways(image string) bool {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return false
	}
	if tagged, ok := named.(reference.Tagged); ok {
		return tagged.Tag() == "latest"
	}
	_, digested := named.(reference.Digested)
	return !digested
}

// pullPolicies remembers defaultPullAlways' answers for up to maxPullPolicies images;
// when full it starts again empty, so it stays bounded whatever images come.
var pullPolicies = &imageMemo{seen: make(map[string]bool)}

const maxPullPolicies = 4096

type imageMemo struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (m *imageMemo) get(image string) (always, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	always, ok = m.seen[image]
	return always, ok
}

func (m *imageMemo) put(image string, always bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.seen) >= maxPullPolicies {
		clear(m.seen)
	}
	m.seen[image] = always
}

func (m *imageMemo) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seen)
}
