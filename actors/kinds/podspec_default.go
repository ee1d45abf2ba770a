package kinds

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
)

const (
	defaultSchedulerName       = "default-scheduler"
	defaultFileMode      int32 = 0o644
)

// defaultPod applies the v1 defaults of a Pod: those of its spec, plus requests
// copied from limits where a container sets a limit but no request.
func defaultPod(pod *corev1.Pod) {
	defaultPodSpec(&pod.Spec)
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			res := &list[i].Resources
			for name, q := range res.Limits {
				if _, ok := res.Requests[name]; ok {
					continue
				}
				if res.Requests == nil {
					res.Requests = corev1.ResourceList{}
				}
				res.Requests[name] = q.DeepCopy()
			}
		}
	}
}

// defaultPodTemplate applies the defaults of a pod template (pods' spec
// defaults, without the limits-to-requests copy real pods get).
func defaultPodTemplate(t *corev1.PodTemplateSpec) {
	if t != nil {
		defaultPodSpec(&t.Spec)
	}
}

func defaultPodSpec(s *corev1.PodSpec) {
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.TerminationGracePeriodSeconds == nil {
		p := podpkg.DefaultGrace
		s.TerminationGracePeriodSeconds = &p
	}
	if s.SchedulerName == "" {
		s.SchedulerName = defaultSchedulerName
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.EnableServiceLinks == nil {
		t := true
		s.EnableServiceLinks = &t
	}
	// serviceAccount is the deprecated spelling of serviceAccountName.
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount
	}
	if s.DeprecatedServiceAccount == "" {
		s.DeprecatedServiceAccount = s.ServiceAccountName
	}
	for i := range s.Volumes {
		defaultVolume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i], s.HostNetwork)
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i], s.HostNetwork)
	}
	for i := range s.EphemeralContainers {
		c := corev1.Container(s.EphemeralContainers[i].EphemeralContainerCommon)
		defaultContainer(&c, s.HostNetwork)
		s.EphemeralContainers[i].EphemeralContainerCommon = corev1.EphemeralContainerCommon(c)
	}
}

func defaultContainer(c *corev1.Container, hostNetwork bool) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		if defaultPullAlways(c.Image) {
			c.ImagePullPolicy = corev1.PullAlways
		} else {
			c.ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for i := range c.Env {
		if ref := envFieldRef(c.Env[i]); ref != nil && ref.APIVersion == "" {
			ref.APIVersion = "v1"
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if c.Lifecycle != nil {
		for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

func envFieldRef(e corev1.EnvVar) *corev1.ObjectFieldSelector {
	if e.ValueFrom == nil {
		return nil
	}
	return e.ValueFrom.FieldRef
}

func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		empty := ""
		p.GRPC.Service = &empty
	}
}

func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

func defaultVolume(v *corev1.Volume) {
	if countVolumeSources(&v.VolumeSource) == 0 {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	mode := func(m **int32) {
		if *m == nil {
			d := defaultFileMode
			*m = &d
		}
	}
	switch {
	case v.Secret != nil:
		mode(&v.Secret.DefaultMode)
	case v.ConfigMap != nil:
		mode(&v.ConfigMap.DefaultMode)
	case v.DownwardAPI != nil:
		mode(&v.DownwardAPI.DefaultMode)
	case v.Projected != nil:
		mode(&v.Projected.DefaultMode)
	case v.HostPath != nil:
		if v.HostPath.Type == nil {
			t := corev1.HostPathUnset
			v.HostPath.Type = &t
		}
	case v.ISCSI != nil:
		if v.ISCSI.ISCSIInterface == "" {
			v.ISCSI.ISCSIInterface = "default"
		}
	}
}

// intOrStringUnset reports whether a port given by number or name is unset.
func intOrStringUnset(p intstr.IntOrString) bool {
	return p.Type == intstr.Int && p.IntVal == 0 || p.Type == intstr.String && p.StrVal == ""
}
