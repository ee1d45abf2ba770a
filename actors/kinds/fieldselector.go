package kinds

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/fields"
)

// FieldLabels returns the field names a field selector may use on this resource,
// sorted; nil when the resource supports no field selectors.
func (r *Resource) FieldLabels() []string {
	if r.Fields == nil || r.New == nil {
		return nil
	}
	set := r.Fields(r.New())
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ValidateFieldSelector checks that a parsed field selector uses only supported
// field names. The error carries the real API server's message
// ("field label not supported: foo"); callers answer it with 400 Bad Request.
func (r *Resource) ValidateFieldSelector(sel fields.Selector) error {
	if sel == nil || sel.Empty() {
		return nil
	}
	supported := map[string]bool{}
	for _, l := range r.FieldLabels() {
		supported[l] = true
	}
	for _, req := range sel.Requirements() {
		if !supported[req.Field] {
			return fmt.Errorf("field label not supported: %s", req.Field)
		}
	}
	return nil
}
