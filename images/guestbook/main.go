// Command guestbook is the guestbook's web frontend, a stand-in for the book's
// guestbook.php image (kubeguide/guestbook-php-frontend):
//
//   - ?cmd=set&key=K&value=V runs SET K V on the master and answers
//     {"message": "Updated"};
//   - any other cmd (the page uses get) runs GET K on a slave and answers
//     {"data": "<value>"} ("" for a missing key);
//   - without cmd it serves the guestbook's HTML page.
//
// The master is $REDIS_MASTER_SERVICE_HOST and the slave $REDIS_SLAVE_SERVICE_HOST
// when GET_HOSTS_FROM=env, else the DNS names redis-master and redis-slave; the port
// is always 6379. It listens on :80, or on :$PORT.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
)

const redisPort = "6379"

// op is what one request asks of Redis: a pure function of the query and the
// environment (route) decides it, the handler carries it out.
type op struct {
	write bool   // SET on the master; otherwise GET on a slave
	addr  string // host:port
	key   string
	value string // for write
}

// route decides the Redis operation for a request's query; ok is false when the
// query has no cmd (the page is wanted).
func route(q url.Values, getenv func(string) string) (o op, ok bool) {
	if !q.Has("cmd") {
		return op{}, false
	}
	fromEnv := getenv("GET_HOSTS_FROM") == "env"
	host := func(dnsName, envName string) string {
		if h := getenv(envName); fromEnv && h != "" {
			return h
		}
		return dnsName
	}
	if q.Get("cmd") == "set" {
		return op{
			write: true,
			addr:  net.JoinHostPort(host("redis-master", "REDIS_MASTER_SERVICE_HOST"), redisPort),
			key:   q.Get("key"),
			value: q.Get("value"),
		}, true
	}
	return op{
		addr: net.JoinHostPort(host("redis-slave", "REDIS_SLAVE_SERVICE_HOST"), redisPort),
		key:  q.Get("key"),
	}, true
}

// store is the Redis side of the handler (redisClient, or a fake in tests).
type store interface {
	Set(ctx context.Context, addr, key, value string) error
	Get(ctx context.Context, addr, key string) (string, bool, error)
}

type handler struct {
	getenv func(string) string
	redis  store
	log    logrus.FieldLogger
}

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o, ok := route(r.URL.Query(), h.getenv)
	if !ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
		return
	}
	if o.write {
		if err := h.redis.Set(r.Context(), o.addr, o.key, o.value); err != nil {
			h.log.WithError(err).WithField("addr", o.addr).Warn("redis set failed")
			writeJSON(w, http.StatusBadGateway, "error", err.Error())
			return
		}
		writeJSON(w, http.StatusOK, "message", "Updated")
		return
	}
	v, _, err := h.redis.Get(r.Context(), o.addr, o.key)
	if err != nil {
		h.log.WithError(err).WithField("addr", o.addr).Warn("redis get failed")
		writeJSON(w, http.StatusBadGateway, "error", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, "data", v)
}

// writeJSON answers {"key": "value"}, spaced as guestbook.php printed it, without
// HTML escaping.
func writeJSON(w http.ResponseWriter, status int, key, value string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "{"+jsonString(key)+": "+jsonString(value)+"}")
}

func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func main() {
	log := logrus.New()
	addr := ":80"
	if p := os.Getenv("PORT"); p != "" {
		addr = ":" + p
	}
	srv := &http.Server{
		Addr:              addr,
		Handler:           handler{getenv: os.Getenv, redis: redisClient{timeout: 5 * time.Second}, log: log},
		ReadHeaderTimeout: 10 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.WithField("addr", addr).Info("listening")
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.WithError(err).Fatal("serve")
	}
}
