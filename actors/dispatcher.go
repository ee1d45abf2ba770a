package actors

import "github.com/asynkron/protoactor-go/actor"

// workerPool is the dispatcher of every kubeactor actor: it runs mailboxes on reused
// goroutines. protoactor's default starts a fresh goroutine for each burst of
// messages, so a write that encodes its object deep in the store would first grow a
// new small stack every time (measured: about 5% of the server's CPU under creates).
// Up to `idle` finished workers wait for the next mailbox; more than that exit.
type workerPool struct {
	idle       chan chan func()
	done       chan struct{} // closed by stop: idle workers exit
	throughput int
}

var _ actor.Dispatcher = (*workerPool)(nil)

func newWorkerPool(idle, throughput int) *workerPool {
	return &workerPool{idle: make(chan chan func(), idle), done: make(chan struct{}), throughput: throughput}
}

// stop lets the idle workers exit; mailboxes scheduled later run on new goroutines.
func (p *workerPool) stop() { close(p.done) }

// Schedule runs fn on an idle worker, or on a new one when none is idle.
func (p *workerPool) Schedule(fn func()) {
	select {
	case w := <-p.idle:
		select {
		case w <- fn:
		case <-p.done: // the worker left: run fn on a goroutine of its own
			go fn()
		}
	default:
		go p.work(fn)
	}
}

// Throughput is how many messages a mailbox processes before yielding its worker.
func (p *workerPool) Throughput() int { return p.throughput }

func (p *workerPool) work(fn func()) {
	next := make(chan func())
	for {
		fn()
		select {
		case p.idle <- next:
		default:
			return // enough workers are idle already
		}
		select {
		case fn = <-next:
		case <-p.done:
			return
		}
	}
}

// longTurns runs mailboxes on a worker pool but lets each go on without yielding:
// Go's scheduler still preempts it every 10 ms. The scheduler actor's mailbox uses
// it: a yield sends its goroutine to the back of the global run queue, behind the
// hundreds of actors that a group commit wakes at once.
type longTurns struct{ *workerPool }

func (longTurns) Throughput() int { return 1 << 30 }
