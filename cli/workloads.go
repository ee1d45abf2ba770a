package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
)

type runCmd struct {
	clientFlags
	Image    string   `name:"image" required:"" help:"The image for the container to run."`
	Replicas int32    `short:"r" name:"replicas" default:"1" help:"Number of replicas to create."`
	Port     int32    `name:"port" default:"-1" help:"The port that the container exposes."`
	Labels   string   `short:"l" name:"labels" help:"Labels to apply, as k=v,k2=v2 (default run=NAME)."`
	Restart  string   `name:"restart" default:"Always" help:"Restart policy: Always creates a replication controller, OnFailure or Never a pod."`
	Env      []string `name:"env" sep:"none" help:"Environment variables to set in the container, K=V (repeatable)."`
	DryRun   bool     `name:"dry-run" help:"Only print the object that would be sent."`
	Output   string   `short:"o" name:"output" help:"Output format: name|json|yaml."`
	Name     string   `arg:"" name:"name" help:"The name of the replication controller or pod."`
}

func (c *runCmd) Run(g *globals) error {
	obj, err := c.object()
	if err != nil {
		return report(g.stderr, err)
	}
	if c.DryRun {
		return report(g.stderr, printWritten(obj, c.Output, "created (dry run)", g.stdout))
	}
	cs, ns, err := c.clientset()
	if err != nil {
		return report(g.stderr, err)
	}
	return report(g.stderr, c.create(context.Background(), cs, ns, obj, g.stdout))
}

// parseKeyValues reads k=v,k2=v2 (labels) or a list of K=V (env).
func parseKeyValues(items []string, what string) (map[string]string, error) {
	out := map[string]string{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid %s: %q, expected KEY=VALUE", what, it)
		}
		out[k] = v
	}
	return out, nil
}

// object is the replication controller (restart Always) or pod that run creates.
func (c *runCmd) object() (runtime.Object, error) {
	if errs := validation.IsDNS1123Subdomain(c.Name); len(errs) > 0 {
		return nil, fmt.Errorf("invalid name %q: %s", c.Name, strings.Join(errs, "; "))
	}
	labels := map[string]string{"run": c.Name}
	if c.Labels != "" {
		var err error
		if labels, err = parseKeyValues(strings.Split(c.Labels, ","), "label"); err != nil {
			return nil, err
		}
		for k, v := range labels {
			if err := validateMeta("labels", k, v); err != nil {
				return nil, err
			}
		}
	}
	env, err := parseKeyValues(c.Env, "env")
	if err != nil {
		return nil, err
	}
	ctr := corev1.Container{Name: c.Name, Image: c.Image}
	if c.Port >= 0 {
		ctr.Ports = []corev1.ContainerPort{{ContainerPort: c.Port}}
	}
	for _, k := range sortedKeys(env) {
		ctr.Env = append(ctr.Env, corev1.EnvVar{Name: k, Value: env[k]})
	}
	spec := corev1.PodSpec{Containers: []corev1.Container{ctr}}
	switch c.Restart {
	case "Always":
		if c.Replicas < 0 {
			return nil, errors.New("--replicas must be 0 or more")
		}
		spec.RestartPolicy = corev1.RestartPolicyAlways
		n := c.Replicas
		return &corev1.ReplicationController{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
			ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: labels},
			Spec: corev1.ReplicationControllerSpec{
				Replicas: &n,
				Selector: labels,
				Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
			},
		}, nil
	case "OnFailure", "Never":
		if c.Replicas != 1 {
			return nil, fmt.Errorf("--restart=%s creates a single pod: --replicas must be 1", c.Restart)
		}
		spec.RestartPolicy = corev1.RestartPolicy(c.Restart)
		return &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: labels},
			Spec:       spec,
		}, nil
	}
	return nil, fmt.Errorf("invalid restart policy: %s", c.Restart)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (c *runCmd) create(ctx context.Context, cs kubernetes.Interface, ns string, obj runtime.Object, out io.Writer) error {
	if _, err := operationPrinter(c.Output, "created"); err != nil {
		return err
	}
	var created runtime.Object
	var err error
	switch o := obj.(type) {
	case *corev1.ReplicationController:
		var rc *corev1.ReplicationController
		rc, err = cs.CoreV1().ReplicationControllers(ns).Create(ctx, o, metav1.CreateOptions{})
		if err == nil {
			rc.TypeMeta = o.TypeMeta
			created = rc
		}
	case *corev1.Pod:
		var pod *corev1.Pod
		pod, err = cs.CoreV1().Pods(ns).Create(ctx, o, metav1.CreateOptions{})
		if err == nil {
			pod.TypeMeta = o.TypeMeta
			created = pod
		}
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", c.Name, err)
	}
	return printWritten(created, c.Output, "created", out)
}

// printWritten prints "kind/name done", or the object in the -o format.
func printWritten(obj runtime.Object, output, done string, out io.Writer) error {
	p, err := operationPrinter(output, done)
	if err != nil {
		return err
	}
	if err := p.PrintObj(obj, out); err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}

type exposeCmd struct {
	clientFlags
	Port        int32    `name:"port" default:"-1" help:"The port that the service serves on."`
	TargetPort  string   `name:"target-port" help:"Name or number of the container port the service directs traffic to (default: --port)."`
	ServiceName string   `name:"name" help:"The name of the service (default: the object's)."`
	Type        string   `name:"type" default:"ClusterIP" help:"Type of the service: ClusterIP or NodePort."`
	Selector    string   `name:"selector" help:"Label selector of the service, k=v,... (default: the object's)."`
	Protocol    string   `name:"protocol" default:"TCP" help:"The protocol of the service port: TCP or UDP."`
	Labels      string   `short:"l" name:"labels" help:"Labels of the service, k=v,... (default: the object's)."`
	DryRun      bool     `name:"dry-run" help:"Only print the service that would be created."`
	Output      string   `short:"o" name:"output" help:"Output format: name|json|yaml."`
	Args        []string `arg:"" name:"type" help:"TYPE NAME or TYPE/NAME: rc, pod or service."`
}

func (c *exposeCmd) Run(g *globals) error {
	cs, ns, err := c.clientset()
	if err != nil {
		return report(g.stderr, err)
	}
	return report(g.stderr, c.run(context.Background(), cs, ns, g.stdout))
}

// exposeSource is what expose reads from the exposed object.
type exposeSource struct {
	Name     string
	Selector map[string]string
	Labels   map[string]string
	Port     int32 // the first container port, or the service's first port; -1 for none
}

// source fetches the object TYPE NAME names.
func (c *exposeCmd) source(ctx context.Context, cs kubernetes.Interface, ns string) (exposeSource, error) {
	reqs, err := parseTypeArgs(c.Args)
	if err != nil {
		return exposeSource{}, err
	}
	if len(reqs) != 1 || len(reqs[0].Names) != 1 {
		return exposeSource{}, errors.New("expose needs exactly one resource: TYPE NAME or TYPE/NAME")
	}
	name := reqs[0].Names[0]
	firstPort := func(spec *corev1.PodSpec) int32 {
		for _, ct := range spec.Containers {
			for _, p := range ct.Ports {
				return p.ContainerPort
			}
		}
		return -1
	}
	switch strings.ToLower(reqs[0].Type) {
	case "rc", "replicationcontroller", "replicationcontrollers":
		rc, err := cs.CoreV1().ReplicationControllers(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return exposeSource{}, fmt.Errorf("get replicationcontroller %q: %w", name, err)
		}
		s := exposeSource{Name: name, Selector: rc.Spec.Selector, Labels: rc.Labels, Port: -1}
		if rc.Spec.Template != nil {
			s.Port = firstPort(&rc.Spec.Template.Spec)
		}
		return s, nil
	case "po", "pod", "pods":
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return exposeSource{}, fmt.Errorf("get pod %q: %w", name, err)
		}
		return exposeSource{Name: name, Selector: pod.Labels, Labels: pod.Labels, Port: firstPort(&pod.Spec)}, nil
	case "svc", "service", "services":
		svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return exposeSource{}, fmt.Errorf("get service %q: %w", name, err)
		}
		s := exposeSource{Name: name, Selector: svc.Spec.Selector, Labels: svc.Labels, Port: -1}
		if len(svc.Spec.Ports) > 0 {
			s.Port = svc.Spec.Ports[0].Port
		}
		return s, nil
	}
	return exposeSource{}, fmt.Errorf("cannot expose a %s: only replicationcontrollers, pods and services", reqs[0].Type)
}

// service builds the service for src from the flags.
func (c *exposeCmd) service(src exposeSource) (*corev1.Service, error) {
	selector := src.Selector
	if c.Selector != "" {
		var err error
		if selector, err = parseKeyValues(strings.Split(c.Selector, ","), "selector"); err != nil {
			return nil, err
		}
	}
	if len(selector) == 0 {
		return nil, fmt.Errorf("couldn't retrieve selectors via --selector flag or introspection of %s", src.Name)
	}
	labels := src.Labels
	if c.Labels != "" {
		var err error
		if labels, err = parseKeyValues(strings.Split(c.Labels, ","), "label"); err != nil {
			return nil, err
		}
	}
	port := c.Port
	if port < 0 {
		port = src.Port
	}
	if port <= 0 {
		return nil, fmt.Errorf("couldn't find port via --port flag or introspection of %s", src.Name)
	}
	var typ corev1.ServiceType
	switch c.Type {
	case "ClusterIP", "NodePort":
		typ = corev1.ServiceType(c.Type)
	default:
		return nil, fmt.Errorf("invalid --type %q: ClusterIP or NodePort", c.Type)
	}
	if c.Protocol != "TCP" && c.Protocol != "UDP" {
		return nil, fmt.Errorf("invalid --protocol %q: TCP or UDP", c.Protocol)
	}
	target := intstr.FromInt32(port)
	if c.TargetPort != "" {
		target = intstr.Parse(c.TargetPort)
	}
	name := src.Name
	if c.ServiceName != "" {
		name = c.ServiceName
	}
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Type:     typ,
			Ports:    []corev1.ServicePort{{Port: port, TargetPort: target, Protocol: corev1.Protocol(c.Protocol)}},
		},
	}, nil
}

func (c *exposeCmd) run(ctx context.Context, cs kubernetes.Interface, ns string, out io.Writer) error {
	if _, err := operationPrinter(c.Output, "exposed"); err != nil {
		return err
	}
	src, err := c.source(ctx, cs, ns)
	if err != nil {
		return err
	}
	svc, err := c.service(src)
	if err != nil {
		return err
	}
	if c.DryRun {
		return printWritten(svc, c.Output, "exposed (dry run)", out)
	}
	created, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create service %q: %w", svc.Name, err)
	}
	created.TypeMeta = svc.TypeMeta
	return printWritten(created, c.Output, "exposed", out)
}
