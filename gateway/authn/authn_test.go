package authn

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const bookTokens = "thomas,thomas,1\nadmin,admin,2\nsystem,system,3\n"

func request(header string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "https://example/api", nil)
	if header != "" {
		r.Header.Set("Authorization", header)
	}
	return r
}

func TestTokenFile(t *testing.T) {
	f, err := ParseTokenFile([]byte(bookTokens + `# a comment

1kjqweroiuou,Thomas,8x7d1kklzseertyywx,"dev, ops"
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		header string
		want   User
		ok     bool
		err    bool
	}{
		{name: "book token", header: "Bearer thomas", want: User{Name: "thomas", UID: "1"}, ok: true},
		{name: "scheme is case-insensitive", header: "bearer admin", want: User{Name: "admin", UID: "2"}, ok: true},
		{name: "groups", header: "Bearer 1kjqweroiuou", want: User{Name: "Thomas", UID: "8x7d1kklzseertyywx", Groups: []string{"dev", "ops"}}, ok: true},
		{name: "unknown token", header: "Bearer nope", err: true},
		{name: "no header", header: ""},
		{name: "basic is not mine", header: "Basic dGhvbWFzOnRob21hcw=="},
		{name: "empty bearer", header: "Bearer "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := f.Authenticate(request(tt.header))
			if ok != tt.ok || (err != nil) != tt.err || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v %v %v, want %+v %v err=%v", u, ok, err, tt.want, tt.ok, tt.err)
			}
			if err != nil && (!errors.Is(err, ErrUnauthorized) || strings.Contains(err.Error(), "nope")) {
				t.Fatalf("error %v: want ErrUnauthorized without the token", err)
			}
		})
	}
}

func TestBasicFile(t *testing.T) {
	f, err := ParseBasicFile([]byte(bookTokens))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		user, pass string
		set        bool
		want       User
		ok, err    bool
	}{
		{name: "book user", user: "thomas", pass: "thomas", set: true, want: User{Name: "thomas", UID: "1"}, ok: true},
		{name: "wrong password", user: "thomas", pass: "wrong", set: true, err: true},
		{name: "unknown user", user: "eve", pass: "thomas", set: true, err: true},
		{name: "no header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := request("")
			if tt.set {
				r.SetBasicAuth(tt.user, tt.pass)
			}
			u, ok, err := f.Authenticate(r)
			if ok != tt.ok || (err != nil) != tt.err || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v %v %v, want %+v %v err=%v", u, ok, err, tt.want, tt.ok, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), tt.pass) {
				t.Fatalf("error %q names the password", err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, data string
	}{
		{name: "two columns", data: "secret-token,user\n"},
		{name: "five columns", data: "a,b,c,d,e\n"},
		{name: "empty user", data: "secret-token, ,1\n"},
		{name: "empty secret", data: ",user,1\n"},
		{name: "bad quote", data: "\"secret-token,user,1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTokenFile([]byte(tt.data))
			if err == nil {
				t.Fatal("want an error")
			}
			if strings.Contains(err.Error(), "secret-token") {
				t.Fatalf("error %q names the secret", err)
			}
		})
	}
}

type fixed struct {
	u   User
	ok  bool
	err error
}

func (f fixed) Authenticate(*http.Request) (User, bool, error) { return f.u, f.ok, f.err }

func TestUnion(t *testing.T) {
	alice := User{Name: "alice"}
	bad := errors.New("bad: " + ErrUnauthorized.Error())
	tests := []struct {
		name    string
		u       Union
		want    User
		wantErr bool
	}{
		{name: "first that recognises wins", u: Union{Members: []Authenticator{fixed{}, fixed{u: alice, ok: true}, fixed{u: User{Name: "bob"}, ok: true}}}, want: alice},
		{name: "a later member recognises what an earlier rejected", u: Union{Members: []Authenticator{fixed{err: bad}, fixed{u: alice, ok: true}}}, want: alice},
		{name: "wrong credentials", u: Union{Members: []Authenticator{fixed{err: bad}, fixed{}}, AllowAnonymous: true}, wantErr: true},
		{name: "anonymous allowed", u: Union{Members: []Authenticator{fixed{}}, AllowAnonymous: true}, want: Anonymous},
		{name: "anonymous refused", u: Union{Members: []Authenticator{fixed{}}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := tt.u.Authenticate(request(""))
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v %v, want %+v err=%v", u, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzParseTokenFile(f *testing.F) {
	f.Add([]byte(bookTokens))
	f.Add([]byte("1kjqweroiuou,Thomas,8x7d1kklzseertyywx,\"a,b\"\n# c\n\n"))
	f.Add([]byte("\"unterminated,x,y\n"))
	f.Add([]byte("a,b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := ParseTokenFile(data)
		if err != nil {
			return
		}
		for _, e := range tf.tokens {
			if e.user.Name == "" {
				t.Fatalf("accepted an entry without a user: %q", data)
			}
		}
		_, _, _ = tf.Authenticate(request("Bearer x"))
	})
}

func FuzzParseBasicFile(f *testing.F) {
	f.Add([]byte(bookTokens), "thomas", "thomas")
	f.Add([]byte("p,u,1,\"g1,g2\"\n"), "u", "p")
	f.Add([]byte(",,\n"), "", "")
	f.Fuzz(func(t *testing.T, data []byte, user, pass string) {
		bf, err := ParseBasicFile(data)
		if err != nil {
			return
		}
		r := request("")
		r.SetBasicAuth(user, pass)
		u, ok, err := bf.Authenticate(r)
		if ok && (err != nil || u.Name != user) {
			t.Fatalf("authenticated %q as %+v (err %v)", user, u, err)
		}
		if !ok && err == nil {
			t.Fatalf("basic credentials neither accepted nor rejected")
		}
	})
}
