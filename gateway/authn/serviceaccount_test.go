package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// accounts is an in-memory AccountGetter.
type accounts struct {
	sas     map[string]*corev1.ServiceAccount
	secrets map[string]*corev1.Secret
}

func (a accounts) ServiceAccount(ns, name string) (*corev1.ServiceAccount, bool, error) {
	sa, ok := a.sas[ns+"/"+name]
	return sa, ok, nil
}

func (a accounts) Secret(ns, name string) (*corev1.Secret, bool, error) {
	s, ok := a.secrets[ns+"/"+name]
	return s, ok, nil
}

func ecKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sign(t testing.TB, key crypto.Signer, sa *corev1.ServiceAccount, secret string) string {
	s, err := NewTokenSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.GenerateToken(sa, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: sa.Namespace}})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestServiceAccountTokens(t *testing.T) {
	key, other := ecKey(t), ecKey(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "dev", UID: "u-1"}}
	good := sign(t, key, sa, "robot-token-abcde")
	rsaTok := sign(t, rsaKey, sa, "robot-token-rsa")
	wrongKey := sign(t, other, sa, "robot-token-abcde")
	wrongIssuer, err := jwt.NewWithClaims(jwt.SigningMethodES256, saClaims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: "someone-else"},
		Namespace:        "dev", SecretName: "robot-token-abcde", Name: "robot", UID: "u-1",
	}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	unsigned, err := jwt.NewWithClaims(jwt.SigningMethodNone, saClaims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: ServiceAccountIssuer},
		Namespace:        "dev", SecretName: "robot-token-abcde", Name: "robot", UID: "u-1",
	}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	secret := func(name, tok string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "dev"}, Data: map[string][]byte{"token": []byte(tok)}}
	}
	live := accounts{
		sas:     map[string]*corev1.ServiceAccount{"dev/robot": sa},
		secrets: map[string]*corev1.Secret{"dev/robot-token-abcde": secret("robot-token-abcde", good), "dev/robot-token-rsa": secret("robot-token-rsa", rsaTok)},
	}
	noSecret := accounts{sas: live.sas, secrets: map[string]*corev1.Secret{}}
	recreated := accounts{sas: map[string]*corev1.ServiceAccount{"dev/robot": {ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "dev", UID: "u-2"}}}, secrets: live.secrets}
	robot := User{Name: "system:serviceaccount:dev:robot", UID: "u-1", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:dev"}}
	keys := []crypto.PublicKey{key.Public(), rsaKey.Public()}
	tests := []struct {
		name   string
		auth   *ServiceAccountTokens
		header string
		want   User
		ok     bool
		err    bool
	}{
		{name: "valid EC token", auth: &ServiceAccountTokens{Keys: keys, Lookup: true, Getter: live}, header: "Bearer " + good, want: robot, ok: true},
		{name: "valid RSA token", auth: &ServiceAccountTokens{Keys: keys, Lookup: true, Getter: live}, header: "Bearer " + rsaTok, want: robot, ok: true},
		{name: "wrong key", auth: &ServiceAccountTokens{Keys: keys, Lookup: true, Getter: live}, header: "Bearer " + wrongKey, err: true},
		{name: "wrong issuer", auth: &ServiceAccountTokens{Keys: keys, Getter: live}, header: "Bearer " + wrongIssuer, err: true},
		{name: "alg none", auth: &ServiceAccountTokens{Keys: keys, Getter: live}, header: "Bearer " + unsigned, err: true},
		{name: "deleted secret, lookup on", auth: &ServiceAccountTokens{Keys: keys, Lookup: true, Getter: noSecret}, header: "Bearer " + good, err: true},
		{name: "deleted secret, lookup off", auth: &ServiceAccountTokens{Keys: keys, Lookup: false, Getter: noSecret}, header: "Bearer " + good, want: robot, ok: true},
		{name: "account recreated with another uid", auth: &ServiceAccountTokens{Keys: keys, Lookup: true, Getter: recreated}, header: "Bearer " + good, err: true},
		{name: "secret holds another token", auth: &ServiceAccountTokens{Keys: keys, Lookup: true, Getter: accounts{sas: live.sas, secrets: map[string]*corev1.Secret{"dev/robot-token-abcde": secret("robot-token-abcde", rsaTok)}}}, header: "Bearer " + good, err: true},
		{name: "token file token is not mine", auth: &ServiceAccountTokens{Keys: keys, Getter: live}, header: "Bearer thomas"},
		{name: "malformed JWT is not mine", auth: &ServiceAccountTokens{Keys: keys, Getter: live}, header: "Bearer a.b.c"},
		{name: "basic is not mine", auth: &ServiceAccountTokens{Keys: keys, Getter: live}, header: "Basic dGhvbWFzOnRob21hcw=="},
		{name: "no header", auth: &ServiceAccountTokens{Keys: keys, Getter: live}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := tt.auth.Authenticate(request(tt.header))
			if ok != tt.ok || (err != nil) != tt.err || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v %v %v, want %+v %v err=%v", u, ok, err, tt.want, tt.ok, tt.err)
			}
			if err != nil && (!errors.Is(err, ErrUnauthorized) || strings.Contains(err.Error(), good)) {
				t.Fatalf("error %v: want ErrUnauthorized without the token", err)
			}
		})
	}
}

func TestTokenClaims(t *testing.T) {
	key := ecKey(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "kube-system", UID: "u-9"}}
	tok := sign(t, key, sa, "default-token-x1y2z")
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return key.Public(), nil })
	if err != nil {
		t.Fatal(err)
	}
	if alg := parsed.Method.Alg(); alg != "ES256" {
		t.Errorf("alg %s, want ES256 for a P-256 key", alg)
	}
	want := map[string]any{
		"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:kube-system:default",
		"kubernetes.io/serviceaccount/namespace": "kube-system", "kubernetes.io/serviceaccount/secret.name": "default-token-x1y2z",
		"kubernetes.io/serviceaccount/service-account.name": "default", "kubernetes.io/serviceaccount/service-account.uid": "u-9",
	}
	if !reflect.DeepEqual(map[string]any(claims), want) {
		t.Errorf("claims %v, want %v", claims, want)
	}
}

func TestParseKeys(t *testing.T) {
	ec := ecKey(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(ec)
	ecDER, _ := x509.MarshalECPrivateKey(ec)
	pub, _ := x509.MarshalPKIXPublicKey(rsaKey.Public())
	tests := []struct {
		name string
		pem  *pem.Block
		want crypto.PublicKey
	}{
		{"pkcs8", &pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}, ec.Public()},
		{"sec1", &pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}, ec.Public()},
		{"pkcs1", &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}, rsaKey.Public()},
		{"public", &pem.Block{Type: "PUBLIC KEY", Bytes: pub}, rsaKey.Public()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := ParsePublicKeys(pem.EncodeToMemory(tt.pem))
			if err != nil || len(keys) != 1 {
				t.Fatalf("ParsePublicKeys: %v %v", keys, err)
			}
			if k, ok := keys[0].(interface{ Equal(crypto.PublicKey) bool }); !ok || !k.Equal(tt.want) {
				t.Fatalf("got %v", keys[0])
			}
		})
	}
	if _, err := ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})); err == nil {
		t.Error("a public key parsed as a private key")
	}
}

func FuzzServiceAccountToken(f *testing.F) {
	key := ecKey(f)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "dev", UID: "u-1"}}
	f.Add(sign(f, key, sa, "robot-token-abcde"))
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	auth := &ServiceAccountTokens{Keys: []crypto.PublicKey{key.Public()}}
	f.Fuzz(func(t *testing.T, tok string) {
		u, ok, err := auth.Authenticate(request("Bearer " + tok))
		if ok && (err != nil || !strings.HasPrefix(u.Name, ServiceAccountUserPrefix)) {
			t.Fatalf("accepted %q as %+v (err %v)", tok, u, err)
		}
	})
}

// BenchmarkServiceAccountToken measures one authentication of a service-account
// token (ES256 verification and the lookup of its secret and account).
func BenchmarkServiceAccountToken(b *testing.B) {
	key := ecKey(b)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "dev", UID: "u-1"}}
	tok := sign(b, key, sa, "robot-token-abcde")
	auth := &ServiceAccountTokens{Keys: []crypto.PublicKey{key.Public()}, Lookup: true, Getter: accounts{
		sas:     map[string]*corev1.ServiceAccount{"dev/robot": sa},
		secrets: map[string]*corev1.Secret{"dev/robot-token-abcde": {Data: map[string][]byte{"token": []byte(tok)}}},
	}}
	r := request("Bearer " + tok)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := auth.Authenticate(r); !ok || err != nil {
			b.Fatal(err)
		}
	}
}

// TestServiceAccountTokenCache: a token verified once is still looked up on every
// request, so deleting its secret refuses it at once.
func TestServiceAccountTokenCache(t *testing.T) {
	key := ecKey(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "dev", UID: "u-1"}}
	tok := sign(t, key, sa, "robot-token-abcde")
	live := accounts{
		sas:     map[string]*corev1.ServiceAccount{"dev/robot": sa},
		secrets: map[string]*corev1.Secret{"dev/robot-token-abcde": {Data: map[string][]byte{"token": []byte(tok)}}},
	}
	auth := &ServiceAccountTokens{Keys: []crypto.PublicKey{key.Public()}, Lookup: true, Getter: live}
	for i := 0; i < 2; i++ {
		if _, ok, err := auth.Authenticate(request("Bearer " + tok)); !ok || err != nil {
			t.Fatalf("request %d: %v %v", i, ok, err)
		}
	}
	delete(live.secrets, "dev/robot-token-abcde")
	if _, ok, err := auth.Authenticate(request("Bearer " + tok)); ok || !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("after the secret was deleted: %v %v", ok, err)
	}
	// A tampered token is not taken from the cache.
	if _, ok, err := auth.Authenticate(request("Bearer " + tok + "x")); ok || err == nil {
		t.Fatalf("tampered token: %v %v", ok, err)
	}
}
