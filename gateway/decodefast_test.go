package gateway

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/randfill"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// agreesWithStrict decodes body as a fresh object of r both ways. Whatever the fast
// decoder accepts, the strict decoder must accept with no strict error (unknown or
// duplicate field), into an equal object. It reports whether the fast decoder took it.
func agreesWithStrict(t *testing.T, r *kinds.Resource, body []byte) bool {
	t.Helper()
	fast := r.New()
	if !decodeFast(body, fast) {
		if !reflect.DeepEqual(fast, r.New()) {
			t.Fatalf("a refused %s body left the object dirty: %#v", r.Kind, fast)
		}
		return false
	}
	slow := r.New()
	strict, err := kjson.UnmarshalStrict(body, slow)
	if err != nil || len(strict) > 0 {
		t.Fatalf("the fast decoder took %s as a %s; the strict one says %v %v", body, r.Kind, err, strict)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s as a %s:\nfast   %#v\nstrict %#v", body, r.Kind, fast, slow)
	}
	return true
}

// TestDecodeFastAgreesWithStrict fills random objects of every served kind (randfill,
// seeded), encodes each as JSON, and decodes it both ways.
func TestDecodeFastAgreesWithStrict(t *testing.T) {
	for _, r := range kinds.All() {
		t.Run(r.Name, func(t *testing.T) {
			fill := randfill.NewWithSeed(int64(len(r.Name))).NilChance(0.2).NumElements(0, 3)
			encoded, accepted := 0, 0
			for range 300 {
				obj := r.New()
				fill.Fill(obj)
				body, err := json.Marshal(obj)
				if err != nil { // e.g. an IntOrString of a type that does not exist
					continue
				}
				encoded++
				if agreesWithStrict(t, r, body) {
					accepted++
				}
			}
			// An object encoded from its own Go type has nothing to refuse: the fast
			// decoder takes (nearly) all of them, or it would not be the fast path.
			if accepted < encoded*9/10 {
				t.Fatalf("the fast decoder took %d of %d encoded %s objects", accepted, encoded, r.Kind)
			}
		})
	}
}

// decodeFastSeeds are bodies of the kinds they name, with the values randfill leaves
// out (quantities, timestamps, int-or-strings, base64 data).
var decodeFastSeeds = []string{
	podJSON("web"),
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","creationTimestamp":"2026-11-21T17:00:00Z","deletionTimestamp":"2026-11-21T17:00:30Z","labels":{"app":"web"}},` +
		`"spec":{"containers":[{"name":"c","image":"busybox:1.36","resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"cpu":"0.5","memory":"1e3","nvidia.com/gpu":"1"}},` +
		`"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],"livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"initialDelaySeconds":3},` +
		`"readinessProbe":{"tcpSocket":{"port":8080}}}],"volumes":[{"name":"v","emptyDir":{"sizeLimit":"1Gi"}}]},` +
		`"status":{"phase":"Running","startTime":"2026-11-21T17:00:01Z","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-21T17:00:02Z"}]}}`,
	`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":"http"},{"port":81,"targetPort":8081,"nodePort":30001}],"type":"NodePort"}}`,
	`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"aGVsbG8="},"stringData":{"s":"\u00e9"},"type":"Opaque"}`,
	`{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"r"},"spec":{"replicas":3,"selector":{"app":"r"},"template":{"metadata":{"labels":{"app":"r"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
	`{"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"a"},"firstTimestamp":"2026-11-21T17:00:00Z","eventTime":"2026-11-21T17:00:00.123456Z","count":2}`,
	`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"podCIDR":"10.0.0.0/24","unschedulable":true},"status":{"capacity":{"cpu":"4","memory":"16Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-21T17:00:00Z"}]}}`,
	`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"10","requests.cpu":"2"}}}`,
	`{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"l"},"spec":{"limits":[{"type":"Container","default":{"cpu":"200m"},"max":{"memory":"1Gi"}}]}}`,
}

// TestDecodeFastRealValues: each seed decodes on the fast path, into the object the
// strict decoder makes of it.
func TestDecodeFastRealValues(t *testing.T) {
	for _, body := range decodeFastSeeds {
		r := kindOfBody(t, body)
		if !agreesWithStrict(t, r, []byte(body)) {
			t.Errorf("the fast decoder refused a clean %s: %s", r.Kind, body)
		}
	}
}

// kindOfBody is the resource of the kind a seed names.
func kindOfBody(t testing.TB, body string) *kinds.Resource {
	var tm struct{ Kind string }
	if err := json.Unmarshal([]byte(body), &tm); err != nil {
		t.Fatal(err)
	}
	r, ok := kinds.LookupKind(tm.Kind)
	if !ok {
		t.Fatalf("no resource of kind %q", tm.Kind)
	}
	return r
}

// FuzzDecodeFast feeds arbitrary JSON to both decoders, as the kind picked by kind.
func FuzzDecodeFast(f *testing.F) {
	edges := []string{ // bodies the two decoders may well treat differently
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","creationTimestamp":null,"labels":{"a":null}},"spec":{"containers":[]}}`,
		`{"kind":"Pod","metadata":{"name":"a","name":"b"}}`,
		`{"kind":"Pod","Metadata":{"name":"a"}}`,
		`{"kind":"Pod","spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"100m","memory":"1e3"}}}]}}`,
		`{"kind":"Service","spec":{"ports":[{"port":80,"targetPort":"http"},{"port":81,"targetPort":8081}]}}`,
		`{"kind":"Secret","data":{"k":"aGVsbG8=","j":"aGVs\nbG8="},"stringData":{"s":"\u00e9\ud800"}}`,
		`{"kind":"ReplicationController","spec":{"replicas":1.0,"minReadySeconds":-0}}`,
		`{"kind":"Event","firstTimestamp":"2026-11-21T17:00:00Z","eventTime":"2026-11-21T17:00:00.123456Z","count":1e1}`,
		`{"kind":"Node","spec":{"podCIDR":"10.0.0.0/24","unschedulable":true,"taints":null}}`,
	}
	all := kinds.All()
	for _, seed := range append(edges, decodeFastSeeds...) {
		f.Add([]byte(seed), uint8(slices.Index(all, kindOfBody(f, seed))))
	}
	f.Fuzz(func(t *testing.T, body []byte, kind uint8) {
		agreesWithStrict(t, all[int(kind)%len(all)], body)
	})
}
