package authz

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Rule is one line of an ABAC policy file (v1.0's policy object). An empty string
// (or "*") matches anything; readonly false allows reads and writes.
type Rule struct {
	User      string `json:"user,omitempty"`
	Group     string `json:"group,omitempty"`
	Readonly  bool   `json:"readonly,omitempty"`
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// NS is the book's spelling of namespace in its bob example; read as Namespace.
	NS string `json:"ns,omitempty"`
}

// Policy is an ABAC policy: a request is allowed when at least one rule matches it.
type Policy []Rule

// ParsePolicy reads --authorization-policy-file: one JSON object per line. Blank
// lines and lines starting with # are skipped, and a # after a line's object starts
// a comment (the book annotates its examples so). Unknown keys are errors: a
// misspelt key would otherwise widen a rule silently.
func ParsePolicy(data []byte) (Policy, error) {
	p := Policy{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, "{") {
			return nil, fmt.Errorf("authz: policy line %d: not a JSON object", n)
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var r Rule
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("authz: policy line %d: %w", n, err)
		}
		if tail := strings.TrimSpace(line[dec.InputOffset():]); tail != "" && !strings.HasPrefix(tail, "#") {
			return nil, fmt.Errorf("authz: policy line %d: text after the object", n)
		}
		if r.NS != "" {
			if r.Namespace != "" && r.Namespace != r.NS {
				return nil, fmt.Errorf("authz: policy line %d: ns %q and namespace %q differ", n, r.NS, r.Namespace)
			}
			r.Namespace, r.NS = r.NS, ""
		}
		p = append(p, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("authz: policy: %w", err)
	}
	return p, nil
}

// Authorize implements Authorizer.
func (p Policy) Authorize(a Attributes) (bool, string) {
	for _, r := range p {
		if r.Matches(a) {
			return true, ""
		}
	}
	return false, "no policy matched"
}

// Matches is v1.0's rule: the subject matches (user, then group), and readonly,
// resource and namespace match or are unset.
func (r Rule) Matches(a Attributes) bool {
	return r.subjectMatches(a) &&
		(!r.Readonly || a.ReadOnly) &&
		matchOrAny(r.Resource, a.Resource) &&
		matchOrAny(r.Namespace, a.Namespace)
}

func (r Rule) subjectMatches(a Attributes) bool {
	if !matchOrAny(r.User, a.User) {
		return false
	}
	if r.Group == "" || r.Group == "*" {
		return true
	}
	for _, g := range a.Groups {
		if g == r.Group {
			return true
		}
	}
	return false
}

func matchOrAny(want, got string) bool { return want == "" || want == "*" || want == got }
