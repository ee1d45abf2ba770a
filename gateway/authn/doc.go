// Package authn tells who sent a request on the secure port: x509 client
// certificates, the token file (Bearer), the basic-auth file and service-account
// JWTs, tried as a union. It only reads the request; it never logs, and its errors
// never carry a secret.
package authn
