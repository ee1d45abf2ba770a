package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestAppendCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "get", args: []string{"GET", "messages"}, want: "*2\r\n$3\r\nGET\r\n$8\r\nmessages\r\n"},
		{name: "set with spaces and CRLF", args: []string{"SET", "k", "a b\r\n"}, want: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\na b\r\n\r\n"},
		{name: "empty value", args: []string{"SET", "k", ""}, want: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"},
		{name: "utf-8 counts bytes", args: []string{"GET", "é"}, want: "*2\r\n$3\r\nGET\r\n$2\r\né\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(appendCommand(nil, tt.args...)); got != tt.want {
				t.Fatalf("appendCommand(%q) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestReadReply(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    reply
		wantErr bool
	}{
		{name: "simple string", in: "+OK\r\n", want: reply{kind: '+', str: "OK"}},
		{name: "error", in: "-ERR wrong type\r\n", want: reply{kind: '-', str: "ERR wrong type"}},
		{name: "integer", in: ":42\r\n", want: reply{kind: ':', str: "42"}},
		{name: "bulk", in: "$5\r\nHello\r\n", want: reply{kind: '$', str: "Hello"}},
		{name: "bulk with CRLF inside", in: "$4\r\na\r\nb\r\n", want: reply{kind: '$', str: "a\r\nb"}},
		{name: "empty bulk", in: "$0\r\n\r\n", want: reply{kind: '$'}},
		{name: "null bulk", in: "$-1\r\n", want: reply{kind: '$', null: true}},
		{name: "bad integer", in: ":x\r\n", wantErr: true},
		{name: "bad bulk length", in: "$-2\r\n", wantErr: true},
		{name: "huge bulk length", in: "$999999999999\r\n", wantErr: true},
		{name: "short bulk", in: "$5\r\nHel", wantErr: true},
		{name: "bulk without CRLF", in: "$2\r\nabcd", wantErr: true},
		{name: "line without CR", in: "+OK\n", wantErr: true},
		{name: "truncated line", in: "+OK", wantErr: true},
		{name: "empty line", in: "\r\n", wantErr: true},
		{name: "array unsupported", in: "*1\r\n$1\r\na\r\n", wantErr: true},
		{name: "eof", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readReply(bufio.NewReader(strings.NewReader(tt.in)))
			if (err != nil) != tt.wantErr {
				t.Fatalf("readReply(%q) error %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Fatalf("readReply(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$3\r\nabc\r\n", "$-1\r\n", "$1\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := readReply(bufio.NewReader(strings.NewReader(string(in))))
		if err != nil {
			return
		}
		// A bulk string read back must re-encode to a prefix of the input.
		if r.kind == '$' && !r.null {
			enc := string(appendCommand(nil, r.str))[len("*1\r\n"):]
			if !strings.HasPrefix(string(in), enc) {
				t.Fatalf("bulk %q from %q does not re-encode to a prefix (%q)", r.str, in, enc)
			}
		}
	})
}

func TestRedisClient(t *testing.T) {
	f := startFakeRedis(t)
	f.set("present", "Hello")
	// raw answers every connection with a fixed reply, for the replies Redis would
	// not send to SET or GET.
	raw := func(reply string) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					if _, err := readCommand(bufio.NewReader(c)); err == nil {
						_, _ = io.WriteString(c, reply)
					}
				}()
			}
		}()
		return ln.Addr().String()
	}
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	c := redisClient{timeout: 5 * time.Second}
	ctx := context.Background()

	tests := []struct {
		name      string
		run       func() (string, bool, error)
		want      string
		wantFound bool
		wantErr   error // nil: no error; errAny: some error
	}{
		{name: "set then get", run: func() (string, bool, error) {
			if err := c.Set(ctx, f.addr(), "k", "v,w"); err != nil {
				return "", false, err
			}
			return c.Get(ctx, f.addr(), "k")
		}, want: "v,w", wantFound: true},
		{name: "get present", run: func() (string, bool, error) { return c.Get(ctx, f.addr(), "present") }, want: "Hello", wantFound: true},
		{name: "get missing", run: func() (string, bool, error) { return c.Get(ctx, f.addr(), "missing") }},
		{name: "error reply", run: func() (string, bool, error) { return c.Get(ctx, raw("-WRONGTYPE x\r\n"), "k") }, wantErr: errRedis},
		{name: "get answered with a simple string", run: func() (string, bool, error) { return c.Get(ctx, raw("+OK\r\n"), "k") }, wantErr: errAny},
		{name: "set answered with a bulk", run: func() (string, bool, error) { return "", false, c.Set(ctx, raw("$2\r\nOK\r\n"), "k", "v") }, wantErr: errAny},
		{name: "connection refused", run: func() (string, bool, error) { return c.Get(ctx, closed, "k") }, wantErr: errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := tt.run()
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.wantErr == errAny && err == nil, tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if got != tt.want || found != tt.wantFound {
				t.Fatalf("got %q, %v; want %q, %v", got, found, tt.want, tt.wantFound)
			}
		})
	}
}

// errAny in a test table stands for any non-nil error.
var errAny = errors.New("any error")
