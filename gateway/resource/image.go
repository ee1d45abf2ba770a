package resource

import (
	"regexp"
	"strings"
)

// The grammar of a container image reference, as the distribution reference
// format defines it: [domain[:port]/]path[:tag][@digest].
var (
	imageDomainRe    = regexp.MustCompile(`^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?$`)
	imageComponentRe = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$`)
	imageTagRe       = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	imageDigestRe    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$`)
	imageIDRe        = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// imageRef is a parsed image reference.
type imageRef struct {
	Name   string // repository, e.g. "nginx" or "registry:5000/team/app"
	Tag    string // "" when absent
	Digest string // "" when absent
}

// parseImageRef parses an image reference; ok is false when it is malformed.
func parseImageRef(s string) (ref imageRef, ok bool) {
	if s == "" || len(s) > 4096 {
		return imageRef{}, false
	}
	rest := s
	if i := strings.Index(rest, "@"); i >= 0 {
		ref.Digest = rest[i+1:]
		rest = rest[:i]
		if !imageDigestRe.MatchString(ref.Digest) {
			return imageRef{}, false
		}
	}
	if i := strings.LastIndex(rest, ":"); i >= 0 && !strings.Contains(rest[i+1:], "/") {
		ref.Tag = rest[i+1:]
		rest = rest[:i]
		if !imageTagRe.MatchString(ref.Tag) {
			return imageRef{}, false
		}
	}
	if rest == "" || len(rest) > 255 || imageIDRe.MatchString(rest) {
		return imageRef{}, false
	}
	parts := strings.Split(rest, "/")
	path := parts
	if len(parts) > 1 && (strings.ContainsAny(parts[0], ".:") || parts[0] == "localhost" || parts[0] != strings.ToLower(parts[0])) {
		if !imageDomainRe.MatchString(parts[0]) {
			return imageRef{}, false
		}
		path = parts[1:]
	}
	for _, c := range path {
		if !imageComponentRe.MatchString(c) {
			return imageRef{}, false
		}
	}
	ref.Name = rest
	return ref, true
}

// defaultPullAlways reports whether the API server defaults an image's pull
// policy to Always (":latest", or neither tag nor digest) rather than
// IfNotPresent (any other tag, a digest alone, or a reference it cannot parse).
func defaultPullAlways(image string) bool {
	ref, ok := parseImageRef(image)
	if !ok {
		return false
	}
	return ref.Tag == "latest" || (ref.Tag == "" && ref.Digest == "")
}
