package cli

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/config"
)

// glogLogger is newLogger with the book's logging flags on top: --v raises the level
// (1 to 3 debug, 4 and more trace; 0 keeps --log-level, info by default), --vmodule raises it per source file, and --logtostderr=false writes to one
// file per component in --log-dir, named as glog names it, with entries at or above
// --stderrthreshold (or all, with --alsologtostderr) also on stderr. The returned
// function closes the file.
func glogLogger(c config.Logging, g config.Glog, component string, stderr io.Writer) (*logrus.Logger, func(), error) {
	log := newLogger(c, stderr)
	if err := g.Check(); err != nil {
		return nil, nil, err
	}
	if v := verbosityLevel(g.Verbosity); g.Verbosity > 0 && v > log.GetLevel() {
		log.SetLevel(v)
	}
	mods, _ := g.Modules() // checked
	if len(mods) > 0 {
		base := log.GetLevel()
		for _, m := range mods {
			if v := verbosityLevel(m.Level); v > log.GetLevel() {
				log.SetLevel(v)
			}
		}
		log.SetReportCaller(true)
		log.SetFormatter(vmoduleFormatter{next: log.Formatter, base: base, mods: mods})
	}
	if g.LogToStderr {
		return log, func() {}, nil
	}
	f, err := openLogFile(g.LogDir, component, time.Now())
	if err != nil {
		return nil, nil, err
	}
	if g.AlsoLogToStderr {
		log.SetOutput(io.MultiWriter(f, stderr))
	} else {
		log.SetOutput(f)
		th, _ := g.Threshold() // checked
		log.AddHook(stderrHook{w: stderr, threshold: th})
	}
	return log, func() { _ = f.Close() }, nil
}

// verbosityLevel maps glog's --v onto logrus's levels.
func verbosityLevel(v int) logrus.Level {
	switch {
	case v >= 4:
		return logrus.TraceLevel
	case v >= 1:
		return logrus.DebugLevel
	}
	return logrus.InfoLevel
}

// openLogFile creates <component>.<host>.<user>.log.INFO.<yyyymmdd-hhmmss>.<pid> in
// dir (default: the temporary directory) and points the link <component>.INFO at it,
// as glog does (its INFO file holds every severity).
func openLogFile(dir, component string, now time.Time) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknownhost"
	}
	host, _, _ = strings.Cut(host, ".")
	name := "unknownuser"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = strings.ReplaceAll(u.Username, string(filepath.Separator), "_")
	}
	file := fmt.Sprintf("%s.%s.%s.log.INFO.%s.%d", component, host, name, now.Format("20060102-150405"), os.Getpid())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--log-dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--log-dir: %w", err)
	}
	link := filepath.Join(dir, component+".INFO")
	_ = os.Remove(link)
	_ = os.Symlink(file, link) // best effort, as glog's
	return f, nil
}

// stderrHook copies entries at or above glog's --stderrthreshold to stderr.
type stderrHook struct {
	w         io.Writer
	threshold config.Severity
}

func (h stderrHook) Levels() []logrus.Level {
	// INFO takes info and more verbose, WARNING warn, ERROR error, FATAL fatal and panic.
	all := [][]logrus.Level{
		{logrus.TraceLevel, logrus.DebugLevel, logrus.InfoLevel},
		{logrus.WarnLevel},
		{logrus.ErrorLevel},
		{logrus.FatalLevel, logrus.PanicLevel},
	}
	var ls []logrus.Level
	for _, l := range all[h.threshold:] {
		ls = append(ls, l...)
	}
	return ls
}

func (h stderrHook) Fire(e *logrus.Entry) error {
	b, err := e.Logger.Formatter.Format(e)
	if err != nil {
		return err
	}
	_, err = h.w.Write(b)
	return err
}

// vmoduleFormatter drops the entries above base that no --vmodule pattern lets
// through for the file that logged them (the logger's level is the most verbose
// the patterns allow).
type vmoduleFormatter struct {
	next logrus.Formatter
	base logrus.Level
	mods []config.VModule
}

func (f vmoduleFormatter) Format(e *logrus.Entry) ([]byte, error) {
	if e.Level <= f.base {
		return f.next.Format(e)
	}
	if e.Caller != nil {
		for _, m := range f.mods {
			if m.Matches(e.Caller.File) {
				if e.Level <= verbosityLevel(m.Level) {
					return f.next.Format(e)
				}
				break
			}
		}
	}
	return nil, nil
}
