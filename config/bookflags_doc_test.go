package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bookSection returns the subsections ("### " headings) of docs/operations.md's
// section "From the book's files to kubeactor", by heading.
func bookSection(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## From the book's files to kubeactor\n")
	if start < 0 {
		t.Fatal(`docs/operations.md has no section "From the book's files to kubeactor"`)
	}
	section := doc[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	subs := map[string]string{}
	parts := strings.Split(section, "\n### ")
	for _, p := range parts[1:] {
		heading, body, _ := strings.Cut(p, "\n")
		subs[heading] = body
	}
	return subs
}

// TestBookFlagsDocumented keeps the doc true to the table: every component has a
// subsection of the section "From the book's files to kubeactor" that names it, and
// every flag of the table (warned, renamed, or taken from a list) is named in its
// component's subsection, the logging ones in the logging subsection.
func TestBookFlagsDocumented(t *testing.T) {
	subs := bookSection(t)
	bodyOf := func(component string) string {
		var out []string
		for heading, body := range subs {
			if slices.Contains(strings.FieldsFunc(heading, func(r rune) bool { return r == ' ' || r == ',' }), component) {
				out = append(out, body)
			}
		}
		if len(out) == 0 {
			t.Errorf("no subsection for %s (headings: %v)", component, keys(subs))
		}
		return strings.Join(out, "\n")
	}
	var logging string
	for heading, body := range subs {
		if strings.HasPrefix(heading, "Logging flags") {
			logging = body
		}
	}
	for _, f := range commonBookFlags {
		if !strings.Contains(logging, "`--"+f.Name+"`") {
			t.Errorf("the logging subsection does not name --%s (%s)", f.Name, f.Reason)
		}
	}
	common := map[string]bool{}
	for _, f := range commonBookFlags {
		common[f.Name] = true
	}
	for _, c := range Components {
		body := bodyOf(c)
		var names []string
		for _, f := range bookFlags[c] {
			names = append(names, f.Name)
		}
		for from, to := range bookRenames[c] {
			names = append(names, from, to)
		}
		for name := range bookFirstOf[c] {
			names = append(names, name)
		}
		for _, name := range names {
			if common[name] {
				continue
			}
			if !strings.Contains(body, "`--"+name+"`") && !strings.Contains(body, "`--"+name+" ") {
				t.Errorf("%s's subsection does not name --%s", c, name)
			}
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
