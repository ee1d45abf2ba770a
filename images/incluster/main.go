// Command incluster is a client of the API from inside a pod, configured as
// client-go's rest.InClusterConfig is: the server at
// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, verified with the
// mounted ca.crt, authenticated with the mounted service-account token. Every
// second it GETs its argument (default: the pods of the pod's namespace) and prints
// "GET <path>: <status code>", so a test reads the answers in the pod's log. It
// never prints the token. Standard library only, to keep the image small.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const dir = "/var/run/secrets/kubernetes.io/serviceaccount/"

func main() {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		fmt.Fprintln(os.Stderr, "incluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")
		os.Exit(2)
	}
	ns, err := os.ReadFile(dir + "namespace")
	if err != nil {
		fmt.Fprintf(os.Stderr, "incluster: %v\n", err)
		os.Exit(2)
	}
	path := "/api/v1/namespaces/" + strings.TrimSpace(string(ns)) + "/pods"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	ca, err := os.ReadFile(dir + "ca.crt")
	if err != nil {
		fmt.Fprintf(os.Stderr, "incluster: %v\n", err)
		os.Exit(2)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		fmt.Fprintln(os.Stderr, "incluster: ca.crt holds no certificate")
		os.Exit(2)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	url := "https://" + net.JoinHostPort(host, port) + path
	for {
		token, err := os.ReadFile(dir + "token")
		if err != nil {
			fmt.Fprintf(os.Stderr, "incluster: %v\n", err)
			os.Exit(2)
		}
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := client.Do(req)
		if err != nil {
			fmt.Printf("GET %s: %v\n", path, err)
		} else {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			fmt.Printf("GET %s: %d\n", path, resp.StatusCode)
		}
		time.Sleep(time.Second)
	}
}
