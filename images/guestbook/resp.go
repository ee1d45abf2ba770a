package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// errRedis marks an error reply from the server ("-ERR ...").
var errRedis = errors.New("guestbook: redis error reply")

// maxBulk bounds a bulk string the client accepts (Redis' own limit is 512 MB; the
// guestbook's values are small).
const maxBulk = 64 << 20

// redisClient speaks just enough RESP for SET and GET: one connection per command,
// which is what a PHP request did with Predis.
type redisClient struct {
	timeout time.Duration // dial plus round trip
}

// Set stores value under key on the server at addr.
func (c redisClient) Set(ctx context.Context, addr, key, value string) error {
	r, err := c.do(ctx, addr, "SET", key, value)
	if err != nil {
		return fmt.Errorf("set %q on %s: %w", key, addr, err)
	}
	if r.kind != '+' || r.str != "OK" {
		return fmt.Errorf("set %q on %s: unexpected reply %q", key, addr, r.str)
	}
	return nil
}

// Get reads key from the server at addr; a missing key is ("", false, nil).
func (c redisClient) Get(ctx context.Context, addr, key string) (string, bool, error) {
	r, err := c.do(ctx, addr, "GET", key)
	if err != nil {
		return "", false, fmt.Errorf("get %q from %s: %w", key, addr, err)
	}
	if r.kind != '$' {
		return "", false, fmt.Errorf("get %q from %s: unexpected reply type %q", key, addr, r.kind)
	}
	return r.str, !r.null, nil
}

func (c redisClient) do(ctx context.Context, addr string, args ...string) (reply, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return reply{}, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(dl); err != nil {
			return reply{}, err
		}
	}
	if _, err := conn.Write(appendCommand(nil, args...)); err != nil {
		return reply{}, err
	}
	r, err := readReply(bufio.NewReader(conn))
	if err != nil {
		return reply{}, err
	}
	if r.kind == '-' {
		return reply{}, fmt.Errorf("%w: %s", errRedis, r.str)
	}
	return r, nil
}

// appendCommand appends args as a RESP array of bulk strings, the form Redis takes
// commands in.
func appendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// reply is one RESP reply other than an array (SET and GET never return one):
// kind is '+' (simple string), '-' (error), ':' (integer, in str) or '$' (bulk
// string; null for the nil bulk string).
type reply struct {
	kind byte
	str  string
	null bool
}

// readReply reads one reply from r.
func readReply(r *bufio.Reader) (reply, error) {
	line, err := readLine(r)
	if err != nil {
		return reply{}, err
	}
	if line == "" {
		return reply{}, errors.New("empty reply line")
	}
	kind, rest := line[0], line[1:]
	switch kind {
	case '+', '-':
		return reply{kind: kind, str: rest}, nil
	case ':':
		if _, err := strconv.ParseInt(rest, 10, 64); err != nil {
			return reply{}, fmt.Errorf("bad integer reply %q", rest)
		}
		return reply{kind: kind, str: rest}, nil
	case '$':
		n, err := strconv.Atoi(rest)
		if err != nil || n < -1 || n > maxBulk {
			return reply{}, fmt.Errorf("bad bulk length %q", rest)
		}
		if n == -1 {
			return reply{kind: kind, null: true}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return reply{}, fmt.Errorf("read bulk string: %w", err)
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return reply{}, errors.New("bulk string not terminated by CRLF")
		}
		return reply{kind: kind, str: string(buf[:n])}, nil
	default:
		return reply{}, fmt.Errorf("unsupported reply type %q", kind)
	}
}

// readLine reads a CRLF-terminated line, without the CRLF.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) && line != "" {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	line, ok := strings.CutSuffix(line, "\r\n")
	if !ok {
		return "", errors.New("reply line not terminated by CRLF")
	}
	return line, nil
}
