package podsync

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// MasterNamespace holds the master `kubernetes` service every pod gets variables
// for.
const MasterNamespace = "default"

// masterService is the API server's own service.
const masterService = "kubernetes"

// Lookup kinds an EnvLookup is asked for.
const (
	LookupSecret    = "secret"    // name: the secret, key: the data key
	LookupConfigMap = "configmap" // name: the config map, key: the data key
	// LookupAllocatable asks for the node's allocatable resource key ("cpu",
	// "memory", "ephemeral-storage"; name empty), for resourceFieldRefs to limits
	// the container does not set.
	LookupAllocatable = "allocatable"
)

// EnvLookup resolves a reference: its value, whether it exists, and an error when
// it could not be looked up.
type EnvLookup func(kind, name, key string) (string, bool, error)

// ServiceEnv are the service variables of pod's containers (the book's format):
// for each service of the pod's namespace (all of them only when enableServiceLinks
// is not false), plus the master `kubernetes` service of "default", that has a
// cluster IP: {SVC}_SERVICE_HOST, {SVC}_SERVICE_PORT (the first port),
// {SVC}_SERVICE_PORT_{NAME} per named port, and the Docker-link variables
// {SVC}_PORT and {SVC}_PORT_{port}_{PROTO}[_PROTO|_PORT|_ADDR]. Services are in
// name order.
func ServiceEnv(pod *corev1.Pod, services []corev1.Service) []corev1.EnvVar {
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	chosen := map[string]*corev1.Service{}
	for i := range services {
		s := &services[i]
		ip := s.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone {
			continue
		}
		switch {
		case s.Namespace == pod.Namespace && links:
			chosen[s.Name] = s // a service of the pod's namespace shadows the master's
		case s.Namespace == MasterNamespace && s.Name == masterService:
			if _, ok := chosen[s.Name]; !ok {
				chosen[s.Name] = s
			}
		}
	}
	names := make([]string, 0, len(chosen))
	for n := range chosen {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []corev1.EnvVar
	add := func(name, value string) { out = append(out, corev1.EnvVar{Name: name, Value: value}) }
	for _, n := range names {
		s := chosen[n]
		prefix := envName(s.Name)
		ip := s.Spec.ClusterIP
		add(prefix+"_SERVICE_HOST", ip)
		if len(s.Spec.Ports) == 0 {
			continue
		}
		add(prefix+"_SERVICE_PORT", strconv.Itoa(int(s.Spec.Ports[0].Port)))
		for _, p := range s.Spec.Ports {
			if p.Name != "" {
				add(prefix+"_SERVICE_PORT_"+envName(p.Name), strconv.Itoa(int(p.Port)))
			}
		}
		for i, p := range s.Spec.Ports {
			proto := string(p.Protocol)
			if proto == "" {
				proto = string(corev1.ProtocolTCP)
			}
			port := strconv.Itoa(int(p.Port))
			url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, port)
			if i == 0 {
				add(prefix+"_PORT", url)
			}
			pp := prefix + "_PORT_" + port + "_" + strings.ToUpper(proto)
			add(pp, url)
			add(pp+"_PROTO", strings.ToLower(proto))
			add(pp+"_PORT", port)
			add(pp+"_ADDR", ip)
		}
	}
	return out
}

// envName is name upper-cased with "-" turned into "_".
func envName(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// ContainerEnv resolves container c's environment in pod: the service variables
// first, then c's env in order (a later definition of a name replaces an earlier
// one in place). Values have $(VAR) references expanded against the variables
// before them; valueFrom reads pod fields (fieldRef), c's resources
// (resourceFieldRef), and secrets and config maps through lookup (nil: such
// references are errors). An unresolvable reference is an error naming the
// variable, wrapping ErrConfig.
func ContainerEnv(pod *corev1.Pod, c *corev1.Container, podIP, hostIP string, services []corev1.Service, lookup EnvLookup) ([]string, error) {
	var names []string
	values := map[string]string{}
	set := func(name, value string) {
		if _, ok := values[name]; !ok {
			names = append(names, name)
		}
		values[name] = value
	}
	for _, v := range ServiceEnv(pod, services) {
		set(v.Name, v.Value)
	}
	get := func(name string) (string, bool) {
		v, ok := values[name]
		return v, ok
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, Expand(e.Value, get))
			continue
		}
		v, ok, err := valueFrom(pod, c, e.ValueFrom, podIP, hostIP, lookup)
		if err != nil {
			return nil, fmt.Errorf("%w: env %s of container %s: %w", ErrConfig, e.Name, c.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + "=" + values[n]
	}
	return out, nil
}

// valueFrom resolves one valueFrom source; ok is false for a missing optional key.
func valueFrom(pod *corev1.Pod, c *corev1.Container, src *corev1.EnvVarSource, podIP, hostIP string, lookup EnvLookup) (string, bool, error) {
	switch {
	case src.FieldRef != nil:
		v, err := fieldRef(pod, src.FieldRef.FieldPath, podIP, hostIP)
		return v, err == nil, err
	case src.ResourceFieldRef != nil:
		v, err := resourceFieldRef(pod, c, src.ResourceFieldRef, lookup)
		return v, err == nil, err
	case src.SecretKeyRef != nil:
		r := src.SecretKeyRef
		return keyRef(lookup, LookupSecret, r.Name, r.Key, r.Optional)
	case src.ConfigMapKeyRef != nil:
		r := src.ConfigMapKeyRef
		return keyRef(lookup, LookupConfigMap, r.Name, r.Key, r.Optional)
	}
	return "", false, fmt.Errorf("valueFrom has no source")
}

func keyRef(lookup EnvLookup, kind, name, key string, optional *bool) (string, bool, error) {
	if lookup == nil {
		return "", false, fmt.Errorf("no %s lookup for %s/%s", kind, name, key)
	}
	v, ok, err := lookup(kind, name, key)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("%s %s: %w", kind, name, err)
	case ok:
		return v, true, nil
	case optional != nil && *optional:
		return "", false, nil
	}
	return "", false, fmt.Errorf("key %q not found in %s %s", key, kind, name)
}

// fieldRef reads a downward-API field of pod.
func fieldRef(pod *corev1.Pod, fp, podIP, hostIP string) (string, error) {
	if k, ok := subscript(fp, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(fp, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch fp {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", fp)
}

// subscript parses "<field>['<key>']" (or double quotes).
func subscript(fp, field string) (string, bool) {
	rest, ok := strings.CutPrefix(fp, field+"[")
	if !ok || !strings.HasSuffix(rest, "]") || len(rest) < 3 {
		return "", false
	}
	rest = rest[:len(rest)-1]
	q := rest[0]
	if (q != '\'' && q != '"') || rest[len(rest)-1] != q || len(rest) < 2 {
		return "", false
	}
	return rest[1 : len(rest)-1], true
}

// resourceFieldRef reads a container resource, scaled down by the divisor and
// rounded up (as Kubernetes does). An unset limit is the node's allocatable.
func resourceFieldRef(pod *corev1.Pod, c *corev1.Container, r *corev1.ResourceFieldSelector, lookup EnvLookup) (string, error) {
	target := c
	if r.ContainerName != "" && r.ContainerName != c.Name {
		target = nil
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == r.ContainerName {
				target = &pod.Spec.Containers[i]
			}
		}
		if target == nil {
			return "", fmt.Errorf("resourceFieldRef: no container %q", r.ContainerName)
		}
	}
	kind, res, ok := strings.Cut(r.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", r.Resource)
	}
	name := corev1.ResourceName(res)
	if name != corev1.ResourceCPU && name != corev1.ResourceMemory && name != corev1.ResourceEphemeralStorage {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", r.Resource)
	}
	list := target.Resources.Limits
	if kind == "requests" {
		list = target.Resources.Requests
	}
	q, ok := list[name]
	if !ok {
		if kind == "requests" {
			q = resource.Quantity{}
		} else {
			if lookup == nil {
				return "", fmt.Errorf("%s is not set and the node's allocatable is unknown", r.Resource)
			}
			v, found, err := lookup(LookupAllocatable, "", res)
			if err != nil || !found {
				return "", fmt.Errorf("%s is not set and the node's allocatable %s is unknown", r.Resource, res)
			}
			if q, err = resource.ParseQuantity(v); err != nil {
				return "", fmt.Errorf("node allocatable %s: %w", res, err)
			}
		}
	}
	divisor := r.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	var n float64
	if name == corev1.ResourceCPU {
		n = math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue()))
	} else {
		n = math.Ceil(float64(q.Value()) / float64(divisor.Value()))
	}
	return strconv.FormatInt(int64(n), 10), nil
}
