package persistence

import (
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/sirupsen/logrus"
)

// hcLogger is hclog.Logger on logrus: Raft's messages go to the store's log, its
// debug and trace at debug level.
type hcLogger struct {
	log  logrus.FieldLogger
	name string
	args []interface{}
}

var _ hclog.Logger = (*hcLogger)(nil)

func newHCLogger(l logrus.FieldLogger) hclog.Logger { return &hcLogger{log: l} }

func (h *hcLogger) entry(args []interface{}) logrus.FieldLogger {
	l := h.log
	if h.name != "" {
		l = l.WithField("raft", h.name)
	}
	all := append(append([]interface{}(nil), h.args...), args...)
	for i := 0; i+1 < len(all); i += 2 {
		l = l.WithField(fmt.Sprint(all[i]), all[i+1])
	}
	if len(all)%2 == 1 {
		l = l.WithField("extra", all[len(all)-1])
	}
	return l
}

func (h *hcLogger) Log(level hclog.Level, msg string, args ...interface{}) {
	switch level {
	case hclog.Trace, hclog.Debug, hclog.NoLevel:
		h.Debug(msg, args...)
	case hclog.Info:
		h.Info(msg, args...)
	case hclog.Warn:
		h.Warn(msg, args...)
	default:
		h.Error(msg, args...)
	}
}

func (h *hcLogger) Trace(msg string, args ...interface{}) { h.Debug(msg, args...) }
func (h *hcLogger) Debug(msg string, args ...interface{}) {
	if h.IsDebug() {
		h.entry(args).Debug(msg)
	}
}
func (h *hcLogger) Info(msg string, args ...interface{})  { h.entry(args).Info(msg) }
func (h *hcLogger) Warn(msg string, args ...interface{})  { h.entry(args).Warn(msg) }
func (h *hcLogger) Error(msg string, args ...interface{}) { h.entry(args).Error(msg) }

func (h *hcLogger) level() logrus.Level {
	if e, ok := h.log.(*logrus.Entry); ok {
		return e.Logger.GetLevel()
	}
	return logrus.GetLevel()
}

func (h *hcLogger) IsTrace() bool              { return false }
func (h *hcLogger) IsDebug() bool              { return h.level() >= logrus.DebugLevel }
func (h *hcLogger) IsInfo() bool               { return h.level() >= logrus.InfoLevel }
func (h *hcLogger) IsWarn() bool               { return h.level() >= logrus.WarnLevel }
func (h *hcLogger) IsError() bool              { return h.level() >= logrus.ErrorLevel }
func (h *hcLogger) ImpliedArgs() []interface{} { return h.args }

func (h *hcLogger) With(args ...interface{}) hclog.Logger {
	return &hcLogger{log: h.log, name: h.name, args: append(append([]interface{}(nil), h.args...), args...)}
}

func (h *hcLogger) Name() string { return h.name }

func (h *hcLogger) Named(name string) hclog.Logger {
	n := name
	if h.name != "" {
		n = h.name + "." + name
	}
	return &hcLogger{log: h.log, name: n, args: h.args}
}

func (h *hcLogger) ResetNamed(name string) hclog.Logger {
	return &hcLogger{log: h.log, name: name, args: h.args}
}

func (h *hcLogger) SetLevel(hclog.Level) {} // logrus's level rules

func (h *hcLogger) GetLevel() hclog.Level {
	switch lv := h.level(); {
	case lv >= logrus.DebugLevel:
		return hclog.Debug
	case lv >= logrus.InfoLevel:
		return hclog.Info
	case lv >= logrus.WarnLevel:
		return hclog.Warn
	}
	return hclog.Error
}

func (h *hcLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(h.StandardWriter(opts), "", 0)
}

func (h *hcLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer { return hcWriter{h} }

type hcWriter struct{ h *hcLogger }

func (w hcWriter) Write(p []byte) (int, error) {
	w.h.Info(strings.TrimSpace(string(p)))
	return len(p), nil
}
