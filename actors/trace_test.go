package actors

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
)

func TestPersistLogsTrace(t *testing.T) {
	st := openStore(t)
	log, hook := test.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	log.SetOutput(io.Discard)
	s, err := Start(Options{Store: st, Log: log, RequestTimeout: 10 * time.Second, Resources: testResources})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ctx := WithTrace(context.Background(), "trace-42")
	if _, err := s.Create(ctx, podKey("ns", "p"), newPod("ns", "p").obj()); err != nil {
		t.Fatal(err)
	}
	for _, e := range hook.AllEntries() {
		if e.Message == "persisted" && e.Level == logrus.DebugLevel && e.Data["trace"] == "trace-42" &&
			e.Data["kind"] == "pods" && e.Data["name"] == "p" && e.Data["namespace"] == "ns" {
			return
		}
	}
	t.Fatalf("no persisted entry with the trace in %v", hook.AllEntries())
}
