package authn

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// entry is one line of a token or basic-auth file: its secret and its user.
type entry struct {
	secret [sha256.Size]byte
	user   User
}

// parseCSV reads v1.0's CSV files: secret,user,uid[,"group1,group2"]; blank lines
// and lines starting with # are skipped. Errors name the line, never the secret.
func parseCSV(data []byte, what string) ([]entry, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.Comment = '#'
	r.TrimLeadingSpace = true
	var out []entry
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("authn: %s: line %d: malformed CSV", what, pe.Line)
			}
			return nil, fmt.Errorf("authn: %s: %w", what, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) < 3 || len(rec) > 4 {
			return nil, fmt.Errorf("authn: %s: line %d: want 3 or 4 columns (secret,user,uid[,groups]), got %d", what, line, len(rec))
		}
		secret, name, uid := rec[0], strings.TrimSpace(rec[1]), strings.TrimSpace(rec[2])
		if secret == "" || name == "" {
			return nil, fmt.Errorf("authn: %s: line %d: empty secret or user", what, line)
		}
		u := User{Name: name, UID: uid}
		if len(rec) == 4 {
			for _, g := range strings.Split(rec[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		out = append(out, entry{secret: sha256.Sum256([]byte(secret)), user: u})
	}
}

// TokenFile authenticates "Authorization: Bearer <token>" with --token-auth-file.
type TokenFile struct{ tokens []entry }

// ParseTokenFile reads a token file: token,user,uid[,"group1,group2"] per line.
func ParseTokenFile(data []byte) (*TokenFile, error) {
	es, err := parseCSV(data, "token file")
	if err != nil {
		return nil, err
	}
	return &TokenFile{tokens: es}, nil
}

var _ Authenticator = (*TokenFile)(nil)

// Authenticate implements Authenticator.
func (f *TokenFile) Authenticate(r *http.Request) (User, bool, error) {
	h := r.Header.Get("Authorization")
	scheme, token, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "bearer") {
		return User{}, false, nil
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return User{}, false, nil
	}
	if u, ok := lookup(f.tokens, token); ok {
		return u, true, nil
	}
	return User{}, false, fmt.Errorf("invalid bearer token: %w", ErrUnauthorized)
}

// BasicFile authenticates "Authorization: Basic" with --basic-auth-file.
type BasicFile struct{ users map[string]entry }

// ParseBasicFile reads a basic-auth file: password,user,uid[,"group1,group2"] per line.
func ParseBasicFile(data []byte) (*BasicFile, error) {
	es, err := parseCSV(data, "basic-auth file")
	if err != nil {
		return nil, err
	}
	f := &BasicFile{users: make(map[string]entry, len(es))}
	for _, e := range es {
		f.users[e.user.Name] = e // a later line wins, as in v1.0
	}
	return f, nil
}

var _ Authenticator = (*BasicFile)(nil)

// Authenticate implements Authenticator.
func (f *BasicFile) Authenticate(r *http.Request) (User, bool, error) {
	name, password, ok := r.BasicAuth()
	if !ok {
		return User{}, false, nil
	}
	e, known := f.users[name]
	sum := sha256.Sum256([]byte(password))
	if !known || subtle.ConstantTimeCompare(sum[:], e.secret[:]) != 1 {
		return User{}, false, fmt.Errorf("invalid username or password: %w", ErrUnauthorized)
	}
	return e.user, true, nil
}

// lookup finds the user of secret, comparing every entry in constant time.
func lookup(es []entry, secret string) (User, bool) {
	sum := sha256.Sum256([]byte(secret))
	var found User
	ok := false
	for _, e := range es {
		if subtle.ConstantTimeCompare(sum[:], e.secret[:]) == 1 && !ok {
			found, ok = e.user, true
		}
	}
	return found, ok
}
