package kinds

import (
	"fmt"
	"math"
	"path"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	supportedRestartPolicies = []string{string(corev1.RestartPolicyAlways), string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}
	supportedDNSPolicies     = []string{string(corev1.DNSClusterFirstWithHostNet), string(corev1.DNSClusterFirst), string(corev1.DNSDefault), string(corev1.DNSNone)}
	supportedPullPolicies    = []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)}
	supportedTermMsgPolicies = []string{string(corev1.TerminationMessageFallbackToLogsOnError), string(corev1.TerminationMessageReadFile)}
	supportedProtocols       = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}
	supportedURISchemes      = []string{string(corev1.URISchemeHTTP), string(corev1.URISchemeHTTPS)}
	supportedTaintEffects    = []string{string(corev1.TaintEffectNoExecute), string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule)}
	supportedTolerationOps   = []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}
	supportedStorageMedia    = []string{"", string(corev1.StorageMediumMemory), string(corev1.StorageMediumHugePages)}
	standardContainerRes     = sets.New[string]("cpu", "memory", "ephemeral-storage")
)

// pointerFields lists the JSON names of the non-nil pointer fields of a struct
// of optional alternatives (a volume source, a probe handler), in field order.
func pointerFields(v interface{}) []string {
	rv := reflect.Indirect(reflect.ValueOf(v))
	var out []string
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			out = append(out, strings.Split(rv.Type().Field(i).Tag.Get("json"), ",")[0])
		}
	}
	return out
}

func countVolumeSources(s *corev1.VolumeSource) int { return len(pointerFields(s)) }

// validatePodSpec validates a pod spec (of a pod or of a template) at fldPath.
func validatePodSpec(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	volumes, vErrs := validateVolumes(spec.Volumes, fldPath.Child("volumes"))
	errs = append(errs, vErrs...)
	names := sets.New[string]()
	errs = append(errs, validateContainers(spec.InitContainers, volumes, names, false, fldPath.Child("initContainers"))...)
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(fldPath.Child("containers"), ""))
	}
	errs = append(errs, validateContainers(spec.Containers, volumes, names, true, fldPath.Child("containers"))...)
	errs = append(errs, validateEnum(string(spec.RestartPolicy), supportedRestartPolicies, fldPath.Child("restartPolicy"))...)
	errs = append(errs, validateEnum(string(spec.DNSPolicy), supportedDNSPolicies, fldPath.Child("dnsPolicy"))...)
	if spec.DNSPolicy == corev1.DNSNone && (spec.DNSConfig == nil || len(spec.DNSConfig.Nameservers) == 0) {
		errs = append(errs, field.Required(fldPath.Child("dnsConfig", "nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when DNS policy is %s", corev1.DNSNone)))
	}
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	if spec.ServiceAccountName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.ServiceAccountName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("serviceAccountName"), spec.ServiceAccountName, msg))
		}
	}
	if spec.NodeName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.NodeName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("nodeName"), spec.NodeName, msg))
		}
	}
	for _, f := range []struct {
		v    string
		name string
	}{{spec.Hostname, "hostname"}, {spec.Subdomain, "subdomain"}} {
		if f.v == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Label(f.v) {
			errs = append(errs, field.Invalid(fldPath.Child(f.name), f.v, msg))
		}
	}
	if spec.ActiveDeadlineSeconds != nil {
		if v := *spec.ActiveDeadlineSeconds; v < 1 || v > math.MaxInt32 {
			errs = append(errs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), v, validation.InclusiveRangeError(1, math.MaxInt32)))
		}
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("imagePullSecrets").Index(i).Child("name"), ""))
		}
	}
	errs = append(errs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	return errs
}

func validateEnum(v string, supported []string, fldPath *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	for _, s := range supported {
		if v == s {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(fldPath, v, supported)}
}

func validateVolumes(vols []corev1.Volume, fldPath *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, v := range vols {
		idx := fldPath.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(idx.Child("name"), ""))
		case names.Has(v.Name):
			errs = append(errs, field.Duplicate(idx.Child("name"), v.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				errs = append(errs, field.Invalid(idx.Child("name"), v.Name, msg))
			}
		}
		if v.Name != "" {
			names.Insert(v.Name)
		}
		errs = append(errs, validateVolumeSource(&v.VolumeSource, idx)...)
	}
	return names, errs
}

func validateVolumeSource(s *corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	set := pointerFields(s)
	switch {
	case len(set) == 0:
		return field.ErrorList{field.Required(fldPath, "must specify a volume type")}
	case len(set) > 1:
		return field.ErrorList{field.Forbidden(fldPath.Child(set[1]), "may not specify more than 1 volume type")}
	}
	var errs field.ErrorList
	switch {
	case s.HostPath != nil:
		errs = append(errs, validateVolumePath(s.HostPath.Path, fldPath.Child("hostPath", "path"))...)
	case s.EmptyDir != nil:
		if !contains(supportedStorageMedia, string(s.EmptyDir.Medium)) {
			errs = append(errs, field.NotSupported(fldPath.Child("emptyDir", "medium"), s.EmptyDir.Medium, supportedStorageMedia[1:]))
		}
	case s.Secret != nil:
		if s.Secret.SecretName == "" {
			errs = append(errs, field.Required(fldPath.Child("secret", "secretName"), ""))
		}
		errs = append(errs, validateFileMode(s.Secret.DefaultMode, fldPath.Child("secret", "defaultMode"))...)
	case s.ConfigMap != nil:
		if s.ConfigMap.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("configMap", "name"), ""))
		}
		errs = append(errs, validateFileMode(s.ConfigMap.DefaultMode, fldPath.Child("configMap", "defaultMode"))...)
	case s.PersistentVolumeClaim != nil:
		if s.PersistentVolumeClaim.ClaimName == "" {
			errs = append(errs, field.Required(fldPath.Child("persistentVolumeClaim", "claimName"), ""))
		}
	case s.NFS != nil:
		if s.NFS.Server == "" {
			errs = append(errs, field.Required(fldPath.Child("nfs", "server"), ""))
		}
		if s.NFS.Path == "" {
			errs = append(errs, field.Required(fldPath.Child("nfs", "path"), ""))
		} else if !path.IsAbs(s.NFS.Path) {
			errs = append(errs, field.Invalid(fldPath.Child("nfs", "path"), s.NFS.Path, "must be an absolute path"))
		}
	case s.GitRepo != nil:
		if s.GitRepo.Repository == "" {
			errs = append(errs, field.Required(fldPath.Child("gitRepo", "repository"), ""))
		}
	}
	return errs
}

func validateVolumePath(p string, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(fldPath, p, "must not contain '..'")}
		}
	}
	return nil
}

func validateFileMode(m *int32, fldPath *field.Path) field.ErrorList {
	if m != nil && (*m > 0o777 || *m < 0) {
		return field.ErrorList{field.Invalid(fldPath, *m, "must be a number between 0 and 0777 (octal), both inclusive")}
	}
	return nil
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// validateContainers validates containers; names collects container names
// across init and regular containers, which must be unique together.
func validateContainers(ctrs []corev1.Container, volumes, names sets.Set[string], regular bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range ctrs {
		c := &ctrs[i]
		idx := fldPath.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(idx.Child("name"), ""))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(idx.Child("name"), c.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(idx.Child("name"), c.Name, msg))
			}
		}
		names.Insert(c.Name)
		if c.Image == "" {
			errs = append(errs, field.Required(idx.Child("image"), ""))
		} else if strings.TrimSpace(c.Image) != c.Image {
			errs = append(errs, field.Invalid(idx.Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
		errs = append(errs, validateEnum(string(c.ImagePullPolicy), supportedPullPolicies, idx.Child("imagePullPolicy"))...)
		errs = append(errs, validateEnum(string(c.TerminationMessagePolicy), supportedTermMsgPolicies, idx.Child("terminationMessagePolicy"))...)
		errs = append(errs, validateContainerPorts(c.Ports, idx.Child("ports"))...)
		errs = append(errs, validateEnv(c.Env, idx.Child("env"))...)
		errs = append(errs, validateVolumeMounts(c.VolumeMounts, volumes, idx.Child("volumeMounts"))...)
		errs = append(errs, validateResources(&c.Resources, idx.Child("resources"))...)
		if regular {
			errs = append(errs, validateProbe(c.LivenessProbe, true, idx.Child("livenessProbe"))...)
			errs = append(errs, validateProbe(c.ReadinessProbe, false, idx.Child("readinessProbe"))...)
			errs = append(errs, validateProbe(c.StartupProbe, true, idx.Child("startupProbe"))...)
		} else {
			for _, p := range []struct {
				probe *corev1.Probe
				name  string
			}{{c.LivenessProbe, "livenessProbe"}, {c.ReadinessProbe, "readinessProbe"}, {c.StartupProbe, "startupProbe"}} {
				if p.probe != nil && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
					errs = append(errs, field.Forbidden(idx.Child(p.name), "may not be set for init containers without restartPolicy=Always"))
				}
			}
		}
	}
	return errs
}

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		idx := fldPath.Index(i)
		if p.Name != "" {
			for _, msg := range validation.IsValidPortName(p.Name) {
				errs = append(errs, field.Invalid(idx.Child("name"), p.Name, msg))
			}
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(idx.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		if p.ContainerPort == 0 {
			errs = append(errs, field.Required(idx.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
				errs = append(errs, field.Invalid(idx.Child("containerPort"), p.ContainerPort, msg))
			}
		}
		if p.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.HostPort)) {
				errs = append(errs, field.Invalid(idx.Child("hostPort"), p.HostPort, msg))
			}
		}
		errs = append(errs, validateEnum(string(p.Protocol), supportedProtocols, idx.Child("protocol"))...)
	}
	return errs
}

func validateEnv(env []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		idx := fldPath.Index(i)
		if e.Name == "" {
			errs = append(errs, field.Required(idx.Child("name"), ""))
		} else {
			for _, msg := range validation.IsEnvVarName(e.Name) {
				errs = append(errs, field.Invalid(idx.Child("name"), e.Name, msg))
			}
		}
		if e.ValueFrom == nil {
			continue
		}
		from := idx.Child("valueFrom")
		switch n := len(pointerFields(e.ValueFrom)); {
		case n == 0:
			errs = append(errs, field.Invalid(from, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
		case n > 1:
			errs = append(errs, field.Invalid(from, "", "may not have more than one field specified at a time"))
		case e.Value != "":
			errs = append(errs, field.Invalid(from, "", "may not be specified when `value` is not empty"))
		}
		if ref := e.ValueFrom.FieldRef; ref != nil && ref.FieldPath == "" {
			errs = append(errs, field.Required(from.Child("fieldRef", "fieldPath"), ""))
		}
		if ref := e.ValueFrom.SecretKeyRef; ref != nil && ref.Key == "" {
			errs = append(errs, field.Required(from.Child("secretKeyRef", "key"), ""))
		}
		if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil && ref.Key == "" {
			errs = append(errs, field.Required(from.Child("configMapKeyRef", "key"), ""))
		}
	}
	return errs
}

func validateVolumeMounts(mounts []corev1.VolumeMount, volumes sets.Set[string], fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mounts {
		idx := fldPath.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(idx.Child("name"), ""))
		} else if !volumes.Has(m.Name) {
			errs = append(errs, field.NotFound(idx.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(idx.Child("mountPath"), ""))
		} else if paths.Has(m.MountPath) {
			errs = append(errs, field.Invalid(idx.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
		if m.SubPath != "" {
			if path.IsAbs(m.SubPath) {
				errs = append(errs, field.Invalid(idx.Child("subPath"), m.SubPath, "must be a relative path"))
			}
			errs = append(errs, validateVolumePath(m.SubPath, idx.Child("subPath"))...)
		}
	}
	return errs
}

func validateResourceName(name string, fldPath *field.Path) field.ErrorList {
	if strings.Contains(name, "/") {
		var errs field.ErrorList
		for _, msg := range validation.IsQualifiedName(name) {
			errs = append(errs, field.Invalid(fldPath, name, msg))
		}
		return errs
	}
	if !standardContainerRes.Has(name) && !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
		return field.ErrorList{field.Invalid(fldPath, name, "must be a standard resource for containers")}
	}
	return nil
}

func validateResources(r *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := fldPath.Child("limits"), fldPath.Child("requests")
	for _, name := range sortedKeys(r.Limits) {
		q := r.Limits[name]
		p := limPath.Key(string(name))
		errs = append(errs, validateResourceName(string(name), p)...)
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, q.String(), apimachineryvalidation.IsNegativeErrorMsg))
		}
	}
	for _, name := range sortedKeys(r.Requests) {
		q := r.Requests[name]
		p := reqPath.Key(string(name))
		errs = append(errs, validateResourceName(string(name), p)...)
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, q.String(), apimachineryvalidation.IsNegativeErrorMsg))
		}
		if lim, ok := r.Limits[name]; ok && q.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
	}
	return errs
}

func validateProbe(p *corev1.Probe, successMustBeOne bool, fldPath *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	switch set := pointerFields(&p.ProbeHandler); {
	case len(set) == 0:
		errs = append(errs, field.Required(fldPath, "must specify a handler type"))
	case len(set) > 1:
		errs = append(errs, field.Forbidden(fldPath.Child(set[1]), "may not specify more than 1 handler type"))
	}
	if h := p.HTTPGet; h != nil {
		errs = append(errs, validatePortNumOrName(h.Port, fldPath.Child("httpGet", "port"))...)
		if !contains(supportedURISchemes, string(h.Scheme)) {
			errs = append(errs, field.NotSupported(fldPath.Child("httpGet", "scheme"), h.Scheme, supportedURISchemes))
		}
	}
	if t := p.TCPSocket; t != nil {
		errs = append(errs, validatePortNumOrName(t.Port, fldPath.Child("tcpSocket", "port"))...)
	}
	if e := p.Exec; e != nil && len(e.Command) == 0 {
		errs = append(errs, field.Required(fldPath.Child("exec", "command"), ""))
	}
	for _, n := range []struct {
		v    int32
		name string
	}{{p.InitialDelaySeconds, "initialDelaySeconds"}, {p.TimeoutSeconds, "timeoutSeconds"}, {p.PeriodSeconds, "periodSeconds"}, {p.SuccessThreshold, "successThreshold"}, {p.FailureThreshold, "failureThreshold"}} {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(n.v), fldPath.Child(n.name))...)
	}
	if successMustBeOne && p.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(fldPath.Child("successThreshold"), p.SuccessThreshold, "must be 1"))
	}
	return errs
}

// validatePortNumOrName accepts a port number in 1-65535 or an IANA port name.
func validatePortNumOrName(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var msgs []string
	switch {
	case port.Type == intstr.Int:
		msgs = validation.IsValidPortNum(port.IntValue())
	case port.StrVal == "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		msgs = validation.IsValidPortName(port.StrVal)
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(fldPath, port.String(), msg))
	}
	return errs
}

func validateTolerations(ts []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		idx := fldPath.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, idx.Child("key"))...)
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if t.Key == "" {
				errs = append(errs, field.Invalid(idx.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(idx.Child("operator"), t, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(idx.Child("operator"), t.Operator, supportedTolerationOps))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(idx.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		if t.Effect != "" && !contains(supportedTaintEffects, string(t.Effect)) {
			errs = append(errs, field.NotSupported(idx.Child("effect"), t.Effect, supportedTaintEffects))
		}
	}
	return errs
}
