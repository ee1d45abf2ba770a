package actors

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// prepareNew readies an object a controller creates (a pod from an RC's template, an
// Endpoints, an Event) exactly as the API readies a created one: kinds.PrepareCreate
// with a fresh uid.
func prepareNew(res string, obj runtime.Object, now time.Time) error {
	r, ok := kinds.Lookup(res)
	if !ok {
		return fmt.Errorf("prepare: no %s resource", res)
	}
	return kinds.PrepareCreate(r, obj, types.UID(uuid.NewString()), now)
}
