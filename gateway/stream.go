package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

// streamSink is where a watch stream's bytes go. There are two: the HTTP response,
// and for HTTP/1.1 the hijacked connection with the chunks framed here. net/http
// writes a chunk of more than its 4 KiB buffer with up to three syscalls (size line,
// data, CRLF); with a thousand watchers those syscalls were half the server's CPU, so
// the hijacked sink writes each flush, framing included, with one.
type streamSink interface {
	Write(p []byte) (int, error)
	WriteString(s string) (int, error)
	Flush() error
	Close() error
}

// responseSink streams through the http.ResponseWriter.
type responseSink struct {
	w    *bufio.Writer
	resp *echo.Response
}

func (r *responseSink) Write(p []byte) (int, error)       { return r.w.Write(p) }
func (r *responseSink) WriteString(s string) (int, error) { return r.w.WriteString(s) }
func (r *responseSink) Close() error                      { return r.Flush() }

func (r *responseSink) Flush() error {
	if err := r.w.Flush(); err != nil {
		return err
	}
	r.resp.Flush()
	return nil
}

// chunkedConn streams on a hijacked HTTP/1.1 connection in chunked encoding. buf
// starts with room for the chunk-size line, so a flush is one write and one copy.
//
// A client that stops reading fills its socket and then the write blocks. With a
// stall hook set, a write that makes no progress for stallPoll asks the hook whether
// to go on waiting; the bytes not yet taken stay in pending (at most one flush, about
// chunkFlushAt), so a stalled client costs a bounded buffer, and the hook decides when
// it has fallen too far behind.
type chunkedConn struct {
	conn    net.Conn
	buf     []byte
	pending []byte       // framed bytes a stalled client has not taken yet
	stall   func() error // nil: block; else asked at every stallPoll without progress
	// deadline is the write deadline set on conn (with stall).
	deadline time.Time
}

// stallPoll is how long a write to a stalled client waits before asking the hook.
const stallPoll = time.Second

// setStall sets the hook asked while the client takes nothing; an error it returns
// ends the flush with that error, keeping what is unsent for the next flush.
func (cc *chunkedConn) setStall(f func() error) { cc.stall = f }

// send writes p, waiting as the stall hook allows; it returns what is left unsent.
func (cc *chunkedConn) send(p []byte) ([]byte, error) {
	for len(p) > 0 {
		if cc.stall != nil { // the deadline is moved at most twice per stallPoll
			if now := time.Now(); cc.deadline.Sub(now) < stallPoll/2 {
				cc.deadline = now.Add(stallPoll)
				_ = cc.conn.SetWriteDeadline(cc.deadline)
			}
		}
		n, err := cc.conn.Write(p)
		p = p[n:]
		if err == nil {
			continue
		}
		var ne net.Error
		if cc.stall == nil || !errors.As(err, &ne) || !ne.Timeout() {
			return p, err
		}
		if err := cc.stall(); err != nil {
			return p, err
		}
	}
	return nil, nil
}

// chunkHeadRoom is the space kept at the front of buf for "<hex size>\r\n".
const chunkHeadRoom = 18

// chunkFlushAt is the size at which a chunk is written without waiting for Flush.
const chunkFlushAt = 256 << 10

func (cc *chunkedConn) Write(p []byte) (int, error) {
	cc.buf = append(cc.buf, p...)
	if len(cc.buf) >= chunkFlushAt {
		return len(p), cc.Flush()
	}
	return len(p), nil
}

func (cc *chunkedConn) WriteString(s string) (int, error) {
	cc.buf = append(cc.buf, s...)
	return len(s), nil
}

func (cc *chunkedConn) Flush() error {
	if len(cc.pending) > 0 {
		rest, err := cc.send(cc.pending)
		cc.pending = append(cc.pending[:0], rest...)
		if err != nil {
			return err
		}
	}
	n := len(cc.buf) - chunkHeadRoom
	if n == 0 {
		return nil
	}
	var size [chunkHeadRoom]byte
	head := strconv.AppendInt(size[:0], int64(n), 16)
	head = append(head, '\r', '\n')
	start := chunkHeadRoom - len(head)
	copy(cc.buf[start:], head)
	cc.buf = append(cc.buf, '\r', '\n')
	rest, err := cc.send(cc.buf[start:])
	cc.pending = append(cc.pending, rest...)
	cc.buf = cc.buf[:chunkHeadRoom]
	return err
}

// Close ends the body with the last chunk and closes the connection.
func (cc *chunkedConn) Close() error {
	if err := cc.Flush(); err != nil {
		_ = cc.conn.Close()
		return err
	}
	_ = cc.conn.SetWriteDeadline(time.Now().Add(stallPoll)) // the last one may have passed
	_, _ = cc.conn.Write([]byte("0\r\n\r\n"))
	return cc.conn.Close()
}

// openStream starts a 200 streaming response with the headers already set on c's
// response. For HTTP/1.1 it hijacks the connection (and cancel is called when the
// client goes away, since net/http no longer watches it); otherwise it streams through
// the ResponseWriter.
func openStream(c echo.Context, cancel context.CancelFunc) streamSink {
	resp := c.Response()
	if r := c.Request(); r.ProtoMajor == 1 && r.ProtoMinor == 1 {
		if conn, rw, err := http.NewResponseController(resp.Writer).Hijack(); err == nil {
			resp.Status, resp.Committed = http.StatusOK, true
			h := resp.Header()
			h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
			h.Set("Transfer-Encoding", "chunked")
			var head bytes.Buffer
			head.WriteString("HTTP/1.1 200 OK\r\n")
			_ = h.Write(&head)
			head.WriteString("\r\n")
			if _, err := conn.Write(head.Bytes()); err != nil {
				cancel()
			}
			go func() { // anything the client sends, or its leaving, ends the watch
				_, _ = rw.Reader.ReadByte()
				cancel()
			}()
			return &chunkedConn{conn: conn, buf: make([]byte, chunkHeadRoom, 64<<10)}
		}
	}
	resp.WriteHeader(http.StatusOK)
	return &responseSink{w: bufio.NewWriterSize(resp, 32<<10), resp: resp}
}
