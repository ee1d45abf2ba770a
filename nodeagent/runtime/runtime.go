package runtime

import (
	"context"
	"errors"
	"io"
	"time"
)

// State is a container's life-cycle state as the engine reports it.
type State string

const (
	StateCreated State = "created" // created, never started
	StateRunning State = "running"
	StateExited  State = "exited" // ran and stopped (or failed to start)
	StateUnknown State = "unknown"
)

// Container is one engine container as observed (list or inspect).
type Container struct {
	ID      string            // full engine id
	Name    string            // without Docker's leading "/"
	Image   string            // the image reference it was created from
	ImageID string            // the image's content id, "sha256:..."
	Labels  map[string]string // as created
	State   State
	// Set once the container has run.
	StartedAt  time.Time
	FinishedAt time.Time
	CreatedAt  time.Time
	ExitCode   int
	OOMKilled  bool
	Error      string // the engine's start error, if any
	PID        int    // of the main process while running
	IP         string // address on the engine's bridge (sandbox containers)
}

// Running tells whether the container's process is alive.
func (c Container) Running() bool { return c.State == StateRunning }

// PortBinding publishes a container port on the host (the pod's hostPorts).
type PortBinding struct {
	ContainerPort int32
	HostPort      int32
	HostIP        string // "" for every address
	Protocol      string // "tcp" or "udp"
}

// Mount is a bind mount of a host path into the container.
type Mount struct {
	Source   string // host path
	Target   string // path in the container
	ReadOnly bool
}

// ContainerConfig is everything needed to create one container.
type ContainerConfig struct {
	Name       string // engine name, e.g. k8s_POD.<hash>_<pod>_<ns>_<uid>_<rand>
	Image      string
	Entrypoint []string // overrides the image's entrypoint when set (the pod's command)
	Cmd        []string // overrides the image's cmd when set (the pod's args)
	WorkingDir string
	Env        []string // "NAME=value"
	Labels     map[string]string
	Hostname   string

	// NetworkMode is "" or "bridge" (the default network), "none", "host",
	// "container:<id>" (join the sandbox), or the name of an engine network.
	NetworkMode string
	// IPCMode is "" (private), "shareable", or "container:<id>".
	IPCMode      string
	PortBindings []PortBinding
	DNS          []string // nameservers for the container's resolv.conf
	DNSSearch    []string
	DNSOptions   []string

	Mounts []Mount

	MemoryLimit int64 // bytes; 0 for none
	CPUShares   int64 // relative weight, from the cpu request; 0 for the default
	CPUQuota    int64 // microseconds per CPUPeriod, from the cpu limit; 0 for none
	CPUPeriod   int64 // microseconds; 0 for the default (100000)

	Privileged bool
	// The rest of the security context.
	User           string   // "uid" or "uid:gid" to run as; "" for the image's user
	GroupAdd       []string // supplementary groups (gids)
	CapAdd         []string // capabilities added, as Kubernetes spells them ("NET_ADMIN")
	CapDrop        []string // capabilities dropped
	SecurityOpt    []string // SELinux labels, "label=type:svirt_lxc_net_t"
	ReadonlyRootfs bool
	TTY            bool
	Stdin          bool
	StdinOnce      bool   // the engine closes stdin when the first attached client detaches
	StopSignal     string // "" for SIGTERM
}

// LogOptions select what Logs streams.
type LogOptions struct {
	Follow     bool
	Tail       int64 // lines from the end; negative for all
	Timestamps bool
	Since      time.Time // zero for the beginning
}

// TermSize is a terminal size change for an interactive exec.
type TermSize struct {
	Width, Height uint16
}

// ExecOptions describe a command run in a running container.
type ExecOptions struct {
	Cmd    []string
	Stdin  io.Reader // nil for none
	Stdout io.Writer // nil to discard
	Stderr io.Writer // nil to discard; ignored with TTY (the terminal merges them)
	TTY    bool
	Resize <-chan TermSize // nil unless TTY
}

// AttachOptions describe an attachment to a running container's own stdio.
type AttachOptions struct {
	Stdin  io.Reader       // nil for none (the container must have been created with Stdin)
	Stdout io.Writer       // nil for none
	Stderr io.Writer       // nil for none; ignored when the container has a terminal
	Resize <-chan TermSize // nil unless the container has a terminal
}

// Stats is a point-in-time usage sample of one container.
type Stats struct {
	Time             time.Time
	CPUUsageNanos    uint64 // cumulative CPU time
	MemoryUsageBytes uint64
	// MemoryWorkingSetBytes is usage less the inactive file cache (the kubelet's
	// working set, what `kubectl top` shows).
	MemoryWorkingSetBytes uint64
	MemoryLimitBytes      uint64
	RxBytes, TxBytes      uint64 // network, summed over interfaces
}

// Info describes the engine and the machine it runs on.
type Info struct {
	Version         string // engine version, e.g. "20.10.24"
	APIVersion      string
	KernelVersion   string
	OperatingSystem string // e.g. "Debian GNU/Linux 12 (bookworm)"
	NCPU            int
	MemTotal        int64 // bytes
	ID              string
	RootDir         string // the engine's data root (images, containers); "" when unknown
}

// Image is one local image of the engine.
type Image struct {
	ID      string   // "sha256:..."
	Tags    []string // repo:tag references; none for a dangling image
	Size    int64    // bytes
	Created time.Time
}

// RegistryAuth is a credential for an image registry (from a pod's image pull
// secrets).
type RegistryAuth struct {
	Username string
	Password string
	Email    string
	// ServerAddress is the registry the credential was given for, as its secret
	// names it.
	ServerAddress string
}

// Event is an engine notification that a container changed state.
type Event struct {
	ContainerID string
	Action      string // "start", "die", "oom", "destroy", ...
	Labels      map[string]string
}

// Runtime is a container engine. Every method is safe for concurrent use. Errors
// that mean "no such container" or "no such image" satisfy IsNotFound.
type Runtime interface {
	Info(ctx context.Context) (Info, error)

	// ListContainers returns the containers (running or not) carrying every label in
	// labels.
	ListContainers(ctx context.Context, labels map[string]string) ([]Container, error)
	InspectContainer(ctx context.Context, id string) (Container, error)
	CreateContainer(ctx context.Context, cfg ContainerConfig) (id string, err error)
	StartContainer(ctx context.Context, id string) error
	// StopContainer sends the stop signal, then SIGKILL after grace.
	StopContainer(ctx context.Context, id string, grace time.Duration) error
	// RemoveContainer removes a stopped container (and kills a running one).
	RemoveContainer(ctx context.Context, id string) error

	// InspectImage returns the id of a local image, or an IsNotFound error.
	InspectImage(ctx context.Context, ref string) (id string, err error)
	// PullImage pulls ref from its registry, presenting auth when it is not nil. A
	// failed pull's error carries the registry's reason.
	PullImage(ctx context.Context, ref string, auth *RegistryAuth) error

	// Logs writes the container's output; with Follow it returns when ctx ends or
	// the container stops.
	Logs(ctx context.Context, id string, opts LogOptions, stdout, stderr io.Writer) error
	// Exec runs a command in a running container and returns its exit code.
	Exec(ctx context.Context, id string, opts ExecOptions) (exitCode int, err error)
	Stats(ctx context.Context, id string) (Stats, error)
	// Events streams container events until ctx ends; the error channel reports why
	// the stream stopped.
	Events(ctx context.Context) (<-chan Event, <-chan error)
}

// Images is what an engine offers beyond Runtime to manage its images: the agent
// builds its infra image with ImportImage and collects unused images. An engine
// without it gets neither.
type Images interface {
	// ImportImage creates the image ref from a tar stream of a root filesystem,
	// applying Dockerfile instructions (ENTRYPOINT, CMD, ENV...) in changes.
	ImportImage(ctx context.Context, ref string, rootfs io.Reader, changes []string) error
	// ListImages lists every local image.
	ListImages(ctx context.Context) ([]Image, error)
	// RemoveImage removes an image (by id: every tag of it) unless a container uses it.
	RemoveImage(ctx context.Context, id string) error
}

// Attacher is what an engine offers beyond Runtime to attach to the main process of
// a running container (kubectl attach). An engine without it answers attach with an
// error.
type Attacher interface {
	// Attach copies opts.Stdin to the container's stdin and its output to
	// opts.Stdout and opts.Stderr. It returns when the output ends (the container
	// stopped) or ctx ends; without output streams, when the input ends.
	Attach(ctx context.Context, id string, opts AttachOptions) error
}

// notFound marks errors for missing containers and images.
type notFound struct{ what string }

func (e notFound) Error() string { return e.what + " not found" }

// NotFound returns an error that satisfies IsNotFound.
func NotFound(what string) error { return notFound{what} }

// IsNotFound tells whether err says that a container or image does not exist.
func IsNotFound(err error) bool {
	var nf notFound
	return errors.As(err, &nf)
}
