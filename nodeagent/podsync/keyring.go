package podsync

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// The Docker Hub: images without a registry host come from it, and credentials
// for any of its names apply to them.
const dockerHub = "docker.io"

// Keyring holds the registry credentials of a pod's image pull secrets and finds
// those that apply to an image, as the kubelet's credential keyring does: a key
// names a host (a glob per dot-separated part, e.g. "*.example.com"), an optional
// port that must be equal, and an optional path that must be a prefix (whole
// segments) of the image's repository.
type Keyring struct {
	entries []keyringEntry // most specific path first, then in the secrets' order
}

type keyringEntry struct {
	host string // lower-case hostname, possibly with glob parts
	port string // "" for none
	path string // repository prefix without leading or trailing "/", "" for any
	auth runtime.RegistryAuth
}

// ErrPullSecret marks a pull secret whose credentials cannot be read.
var ErrPullSecret = errors.New("podsync: bad image pull secret")

// dockerConfigEntry is one registry's credentials in a .dockercfg or in the auths
// of a .dockerconfigjson.
type dockerConfigEntry struct {
	Auth     string `json:"auth"`
	Username string `json:"username"`
	Password string `json:"password"`
	Email    string `json:"email"`
}

// ParseDockercfg reads the .dockercfg key of a kubernetes.io/dockercfg secret: a
// map from registry to credentials. An "auth" field (base64 of user:password)
// takes precedence over username and password.
func ParseDockercfg(data []byte) (map[string]runtime.RegistryAuth, error) {
	var cfg map[string]dockerConfigEntry
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%w: .dockercfg: %v", ErrPullSecret, err)
	}
	return decodeEntries(cfg)
}

// ParseDockerConfigJSON reads the .dockerconfigjson key of a
// kubernetes.io/dockerconfigjson secret: {"auths": {registry: credentials}}.
func ParseDockerConfigJSON(data []byte) (map[string]runtime.RegistryAuth, error) {
	var cfg struct {
		Auths map[string]dockerConfigEntry `json:"auths"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%w: .dockerconfigjson: %v", ErrPullSecret, err)
	}
	return decodeEntries(cfg.Auths)
}

func decodeEntries(cfg map[string]dockerConfigEntry) (map[string]runtime.RegistryAuth, error) {
	out := make(map[string]runtime.RegistryAuth, len(cfg))
	for reg, e := range cfg {
		a := runtime.RegistryAuth{Username: e.Username, Password: e.Password, Email: e.Email}
		if e.Auth != "" {
			user, pass, err := decodeAuthField(e.Auth)
			if err != nil {
				return nil, fmt.Errorf("%w: registry %q: %v", ErrPullSecret, reg, err)
			}
			a.Username, a.Password = user, pass
		}
		out[reg] = a
	}
	return out, nil
}

// decodeAuthField splits the base64 of "user:password".
func decodeAuthField(s string) (user, pass string, err error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", "", fmt.Errorf("auth is not base64: %v", err)
	}
	user, pass, ok := strings.Cut(string(b), ":")
	if !ok {
		return "", "", errors.New("auth is not user:password")
	}
	return user, pass, nil
}

// PullKeyring builds the keyring of a pod's image pull secrets, in the order the
// pod lists them. Secrets of other types, or without their type's key, add
// nothing; a secret whose key cannot be parsed is an error naming it.
func PullKeyring(secrets []*corev1.Secret) (*Keyring, error) {
	k := &Keyring{}
	for _, s := range secrets {
		var creds map[string]runtime.RegistryAuth
		var err error
		switch s.Type {
		case corev1.SecretTypeDockerConfigJson:
			if b := s.Data[corev1.DockerConfigJsonKey]; len(b) > 0 {
				creds, err = ParseDockerConfigJSON(b)
			}
		case corev1.SecretTypeDockercfg:
			if b := s.Data[corev1.DockerConfigKey]; len(b) > 0 {
				creds, err = ParseDockercfg(b)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("secret %q: %w", s.Name, err)
		}
		// Map order is random: add one secret's registries in a fixed order.
		regs := make([]string, 0, len(creds))
		for reg := range creds {
			regs = append(regs, reg)
		}
		slices.Sort(regs)
		for _, reg := range regs {
			k.add(reg, creds[reg])
		}
	}
	slices.SortStableFunc(k.entries, func(a, b keyringEntry) int {
		return cmp.Compare(segments(b.path), segments(a.path))
	})
	return k, nil
}

// add files a credential under its registry key; a key that is not a URL is skipped,
// as the kubelet skips it.
func (k *Keyring) add(reg string, a runtime.RegistryAuth) {
	u, err := parseSchemeless(reg)
	if err != nil || u.Hostname() == "" {
		return
	}
	p := strings.Trim(u.Path, "/")
	// The Docker client names registries by their API root: "/v1/" and "/v2/" are
	// the host itself.
	if p == "v1" || p == "v2" {
		p = ""
	} else if rest, ok := strings.CutPrefix(p, "v1/"); ok {
		p = rest
	} else if rest, ok := strings.CutPrefix(p, "v2/"); ok {
		p = rest
	}
	host := strings.ToLower(u.Hostname())
	if isDockerHub(host) && u.Port() == "" {
		host = dockerHub
	}
	if a.ServerAddress == "" {
		a.ServerAddress = reg
	}
	k.entries = append(k.entries, keyringEntry{host: host, port: u.Port(), path: p, auth: a})
}

// Lookup returns the credentials that apply to image (a reference with or without
// tag or digest), most specific first: each is to be tried in turn. None means the
// image is pulled without credentials.
func (k *Keyring) Lookup(image string) []runtime.RegistryAuth {
	if k == nil {
		return nil
	}
	host, port, repo, ok := splitImage(image)
	if !ok {
		return nil
	}
	var out []runtime.RegistryAuth
	for _, e := range k.entries {
		if e.port != port || !hostMatches(e.host, host) {
			continue
		}
		if e.path != "" && repo != e.path && !strings.HasPrefix(repo, e.path+"/") {
			continue
		}
		out = append(out, e.auth)
	}
	return out
}

// splitImage splits an image reference into its registry's host and port and the
// repository path, without tag or digest. An image whose first component has no
// "." or ":" and is not "localhost" is the Docker Hub's.
func splitImage(image string) (host, port, repo string, ok bool) {
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	if name == "" {
		return "", "", "", false
	}
	first, rest, hasSlash := strings.Cut(name, "/")
	if !hasSlash || (!strings.ContainsAny(first, ".:") && first != "localhost") {
		if !hasSlash {
			name = "library/" + name
		}
		return dockerHub, "", name, true
	}
	u, err := url.Parse("https://" + first)
	if err != nil || u.Hostname() == "" {
		return "", "", "", false
	}
	host = strings.ToLower(u.Hostname())
	if isDockerHub(host) && u.Port() == "" {
		host = dockerHub
	}
	return host, u.Port(), rest, true
}

// hostMatches matches a hostname against a pattern whose dot-separated parts may be
// globs; the number of parts must be equal.
func hostMatches(pattern, host string) bool {
	pp, hp := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pp) != len(hp) {
		return false
	}
	for i := range pp {
		if ok, err := filepath.Match(pp[i], hp[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func isDockerHub(host string) bool {
	switch host {
	case "docker.io", "index.docker.io", "registry-1.docker.io":
		return true
	}
	return false
}

// parseSchemeless parses a registry key that may or may not start with a scheme.
func parseSchemeless(s string) (*url.URL, error) {
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		s = "https://" + s
	}
	return url.Parse(s)
}

func segments(p string) int {
	if p == "" {
		return 0
	}
	return strings.Count(p, "/") + 1
}
