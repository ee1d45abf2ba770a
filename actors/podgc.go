package actors

import (
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/persistence"
)

// PodGCPeriod is how often the terminated-pod garbage collector counts (Kubernetes'
// gcCheckPeriod).
const PodGCPeriod = 20 * time.Second

// podGCName is the collector's actor name.
const podGCName = "podgc"

type podGCTick struct{}

// podGCState is what the collector keeps across restarts.
type podGCState struct {
	timer    Timer
	inFlight map[persistence.Key]bool // deletes sent and not answered
	// counted is the pods' Changed revision noted before the last count: while it
	// stays, no pod terminated or went, so a count would find what the last one did.
	counted int64
}

// podGC is the terminated-pod garbage collector: every PodGCPeriod it reads the
// stored pods and deletes the oldest terminated ones beyond
// Options.TerminatedPodGCThreshold (pod.TerminatedToDelete chooses), through the
// pods' own actors.
type podGC struct {
	env *env
	st  *podGCState
}

// spawnPodGC starts the collector under the name id, when it is configured.
func spawnPodGC(ctx actor.Context, e *env, id string) *actor.PID {
	if _, ok := e.managers["pods"]; !ok || e.podGCThreshold <= 0 {
		return nil
	}
	st := &podGCState{inFlight: map[persistence.Key]bool{}}
	props := actor.PropsFromProducer(func() actor.Actor { return &podGC{env: e, st: st} },
		actor.WithSupervisor(restartStrategy(e.log.WithField("actor", podGCName))), actor.WithDispatcher(e.workers),
		actor.WithReceiverMiddleware(e.receiveWire)) // its deletes' answers may come from another member
	pid, err := ctx.SpawnNamed(props, id)
	if err != nil {
		panic(err) // cannot happen: the supervisor names each start anew
	}
	return pid
}

// Receive collects at start and on every tick.
func (g *podGC) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		g.arm(ctx)
	case *podGCTick:
		g.collect(ctx)
		g.arm(ctx)
	case *reply:
		delete(g.st.inFlight, msg.key)
		if msg.err != nil && !errors.Is(msg.err, persistence.ErrNotFound) {
			g.env.log.WithFields(logrus.Fields{"pod": msg.key.Namespace + "/" + msg.key.Name, "error": msg.err}).
				Warn("terminated-pod gc: delete pod")
		}
	case *actor.Stopping:
		if g.st.timer != nil {
			g.st.timer.Stop()
		}
	}
}

func (g *podGC) arm(ctx actor.Context) {
	if g.st.timer != nil {
		g.st.timer.Stop()
	}
	self, root := ctx.Self(), g.env.root
	g.st.timer = g.env.clock.AfterFunc(PodGCPeriod, func() { root.Send(self, &podGCTick{}) })
}

// collect deletes the terminated pods beyond the threshold.
func (g *podGC) collect(ctx actor.Context) {
	changed := g.env.store.Changed("pods")
	if changed == g.st.counted && len(g.st.inFlight) == 0 {
		return
	}
	g.st.counted = changed
	var pods []*corev1.Pod
	g.env.store.Snapshot("pods").Ascend("", "", func(it *persistence.Item) bool {
		// Only terminated pods count: the others are not decoded (nor kept decoded)
		// for it, which every 20 s would keep every pod of the store decoded.
		if !pod.MayBeTerminal(it.JSON()) {
			return true
		}
		if p, ok := it.Peek().(*corev1.Pod); ok { // a scan: not kept decoded
			pods = append(pods, p)
		}
		return true
	})
	victims := pod.TerminatedToDelete(pods, g.env.podGCThreshold)
	sent := 0
	for _, p := range victims {
		k := podKey(p.Namespace, p.Name)
		if g.st.inFlight[k] {
			continue
		}
		g.st.inFlight[k] = true
		sent++
		zero := int64(0) // a terminated pod runs nothing: deleted at once, as Kubernetes' podgc does
		ctx.Request(g.env.managers["pods"], &deleteRequest{envelope: envelope{trace: "podgc", key: k},
			opts: DeleteOptions{GracePeriodSeconds: &zero}})
	}
	if sent > 0 {
		g.env.log.WithFields(logrus.Fields{"pods": sent, "threshold": g.env.podGCThreshold}).Info("deleting terminated pods")
	}
}
