package kinds

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The table's own columns agree with each other: only stored kinds have actors, so
// only they can answer a DELETE with the object or have a controller.
func TestTableColumnsAgree(t *testing.T) {
	stored := map[string]bool{}
	for _, name := range Stored() {
		stored[name] = true
	}
	for _, r := range All() {
		t.Run(r.Name, func(t *testing.T) {
			if r.Stored != stored[r.Name] {
				t.Fatalf("Stored() and the table disagree on %s", r.Name)
			}
			if !r.Stored && (r.DeleteReturnsObject || r.Controller != "") {
				t.Fatalf("%s is not stored but has DeleteReturnsObject=%v Controller=%q", r.Name, r.DeleteReturnsObject, r.Controller)
			}
			if r.Stored && r.New == nil {
				t.Fatalf("stored kind %s has no New", r.Name)
			}
		})
	}
	for _, name := range []string{"bindings", "componentstatuses"} {
		if stored[name] {
			t.Errorf("%s must not be stored", name)
		}
	}
	for _, ns := range BootstrapNamespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			t.Errorf("bootstrap namespace %q: %v", ns, errs)
		}
	}
}
