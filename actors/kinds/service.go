package kinds

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	supportedServiceTypes     = []string{string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeExternalName), string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeNodePort)}
	supportedSessionAffinity  = []string{string(corev1.ServiceAffinityClientIP), string(corev1.ServiceAffinityNone)}
	supportedTrafficPolicies  = []string{string(corev1.ServiceInternalTrafficPolicyCluster), string(corev1.ServiceInternalTrafficPolicyLocal)}
	defaultClientIPTimeout    = int32(corev1.DefaultClientIPServiceAffinitySeconds)
	maxClientIPTimeoutSeconds = int32(86400) // one day, the real limit
)

var services = &Resource{
	Name:                "services",
	SingularName:        "service",
	Kind:                "Service",
	ShortNames:          []string{"svc"},
	Namespaced:          true,
	Verbs:               verbsAll,
	Subresources:        []string{"proxy", "status"},
	Stored:              true,
	DeleteReturnsObject: true,
	Controller:          "service-controller",

	New:     func() runtime.Object { return &corev1.Service{} },
	NewList: func() runtime.Object { return &corev1.ServiceList{} },

	Default:                defaulter(defaultService),
	PrepareForCreate:       defaulter(prepareServiceCreate),
	PrepareForUpdate:       updater(prepareServiceUpdate),
	PrepareForStatusUpdate: updater(prepareServiceStatusUpdate),
	Validate:               validator(validateService),
	ValidateUpdate:         updateValidator(validateServiceUpdate),
	Fields: fieldSetter(func(s *corev1.Service) fields.Set {
		return metaFields(&s.ObjectMeta, fields.Set{"spec.clusterIP": s.Spec.ClusterIP, "spec.type": string(s.Spec.Type)})
	}),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
		{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
		{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
		{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
		ageColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
	},
	RowAt: rower(serviceRow),
}

func defaultService(s *corev1.Service) {
	if s.Spec.Type == "" {
		s.Spec.Type = corev1.ServiceTypeClusterIP
	}
	if s.Spec.SessionAffinity == "" {
		s.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		if s.Spec.SessionAffinityConfig == nil {
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{}
		}
		if s.Spec.SessionAffinityConfig.ClientIP == nil {
			s.Spec.SessionAffinityConfig.ClientIP = &corev1.ClientIPConfig{}
		}
		if s.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds == nil {
			t := defaultClientIPTimeout
			s.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds = &t
		}
	}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if intOrStringUnset(p.TargetPort) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if s.Spec.Type != corev1.ServiceTypeExternalName && s.Spec.InternalTrafficPolicy == nil {
		p := corev1.ServiceInternalTrafficPolicyCluster
		s.Spec.InternalTrafficPolicy = &p
	}
	if (s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer) && s.Spec.ExternalTrafficPolicy == "" {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.AllocateLoadBalancerNodePorts == nil {
		t := true
		s.Spec.AllocateLoadBalancerNodePorts = &t
	}
	if s.Spec.ClusterIP != "" && len(s.Spec.ClusterIPs) == 0 {
		s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
	}
}

func prepareServiceCreate(s *corev1.Service) {
	s.Status = corev1.ServiceStatus{}
	s.Generation = 1
}

// prepareServiceUpdate keeps status and what the cluster allocated (cluster IP,
// node ports) when the update leaves them unset, as the real API server does.
func prepareServiceUpdate(s, old *corev1.Service) {
	s.Status = *old.Status.DeepCopy()
	keepIP := s.Spec.Type != corev1.ServiceTypeExternalName && old.Spec.Type != corev1.ServiceTypeExternalName
	if keepIP && s.Spec.ClusterIP == "" && len(s.Spec.ClusterIPs) == 0 {
		s.Spec.ClusterIP = old.Spec.ClusterIP
		s.Spec.ClusterIPs = append([]string(nil), old.Spec.ClusterIPs...)
	}
	if s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for i := range s.Spec.Ports {
			p := &s.Spec.Ports[i]
			if p.NodePort != 0 {
				continue
			}
			for _, op := range old.Spec.Ports {
				if op.Port == p.Port && op.Protocol == p.Protocol {
					p.NodePort = op.NodePort
					break
				}
			}
		}
	}
	bumpGeneration(&s.ObjectMeta, &old.ObjectMeta, !equality.Semantic.DeepEqual(s.Spec, old.Spec))
}

func prepareServiceStatusUpdate(s, old *corev1.Service) {
	keepMetaForStatus(&s.ObjectMeta, &old.ObjectMeta)
	s.Spec = *old.Spec.DeepCopy()
}

func validateService(s *corev1.Service) field.ErrorList {
	errs := validateMeta(&s.ObjectMeta, true, nameDNS1035Label)
	return append(errs, validateServiceSpec(&s.Spec, field.NewPath("spec"))...)
}

func validateServiceUpdate(s, old *corev1.Service) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	external := s.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName
	if !external && old.Spec.ClusterIP != "" && s.Spec.ClusterIP != old.Spec.ClusterIP {
		errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), s.Spec.ClusterIPs, "may not change once set"))
	}
	return append(errs, validateServiceSpec(&s.Spec, specPath)...)
}

func validateServiceSpec(spec *corev1.ServiceSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateEnum(string(spec.Type), supportedServiceTypes, specPath.Child("type"))...)
	errs = append(errs, validateEnum(string(spec.SessionAffinity), supportedSessionAffinity, specPath.Child("sessionAffinity"))...)
	if c := spec.SessionAffinityConfig; spec.SessionAffinity == corev1.ServiceAffinityClientIP && c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
		if t := *c.ClientIP.TimeoutSeconds; t <= 0 || t > maxClientIPTimeoutSeconds {
			errs = append(errs, field.Invalid(specPath.Child("sessionAffinityConfig", "clientIP", "timeoutSeconds"), t, fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPTimeoutSeconds)))
		}
	}

	headless := spec.ClusterIP == corev1.ClusterIPNone
	switch {
	case spec.Type == corev1.ServiceTypeExternalName:
		if spec.ClusterIP != "" {
			errs = append(errs, field.Forbidden(specPath.Child("clusterIP"), "may not be set for ExternalName services"))
		}
		if spec.ExternalName == "" {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(strings.TrimSuffix(spec.ExternalName, ".")) {
				errs = append(errs, field.Invalid(specPath.Child("externalName"), spec.ExternalName, msg))
			}
		}
	case headless && (spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer):
		errs = append(errs, field.Invalid(specPath.Child("clusterIP"), spec.ClusterIP, fmt.Sprintf("may not be set to 'None' for %s services", spec.Type)))
	case spec.ClusterIP != "" && !headless:
		errs = append(errs, validation.IsValidIP(specPath.Child("clusterIP"), spec.ClusterIP)...)
	}

	if len(spec.Ports) == 0 && !headless && spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	names := sets.New[string]()
	type portKey struct {
		port     int32
		protocol corev1.Protocol
	}
	seen := map[portKey]bool{}
	nodePorts := map[portKey]bool{}
	for i, p := range spec.Ports {
		idx := specPath.Child("ports").Index(i)
		if p.Name == "" {
			if len(spec.Ports) > 1 {
				errs = append(errs, field.Required(idx.Child("name"), ""))
			}
		} else {
			for _, msg := range validation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(idx.Child("name"), p.Name, msg))
			}
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(idx.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(idx.Child("port"), p.Port, msg))
		}
		errs = append(errs, validateEnum(string(p.Protocol), supportedProtocols, idx.Child("protocol"))...)
		errs = append(errs, validatePortNumOrName(p.TargetPort, idx.Child("targetPort"))...)
		key := portKey{p.Port, p.Protocol}
		if seen[key] {
			errs = append(errs, field.Duplicate(idx, fmt.Sprintf("%d/%s", p.Port, p.Protocol)))
		}
		seen[key] = true
		if p.NodePort != 0 {
			switch spec.Type {
			case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
				for _, msg := range validation.IsValidPortNum(int(p.NodePort)) {
					errs = append(errs, field.Invalid(idx.Child("nodePort"), p.NodePort, msg))
				}
				nk := portKey{p.NodePort, p.Protocol}
				if nodePorts[nk] {
					errs = append(errs, field.Duplicate(idx.Child("nodePort"), p.NodePort))
				}
				nodePorts[nk] = true
			default:
				errs = append(errs, field.Forbidden(idx.Child("nodePort"), fmt.Sprintf("may not be used when `type` is '%s'", spec.Type)))
			}
		}
	}

	if spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, metav1validation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	if p := spec.InternalTrafficPolicy; p != nil && !contains(supportedTrafficPolicies, string(*p)) {
		errs = append(errs, field.NotSupported(specPath.Child("internalTrafficPolicy"), *p, supportedTrafficPolicies))
	}
	if spec.ExternalTrafficPolicy != "" {
		if spec.Type == corev1.ServiceTypeClusterIP || spec.Type == corev1.ServiceTypeExternalName {
			errs = append(errs, field.Invalid(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		} else if !contains(supportedTrafficPolicies, string(spec.ExternalTrafficPolicy)) {
			errs = append(errs, field.NotSupported(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, supportedTrafficPolicies))
		}
	}
	for i, ip := range spec.ExternalIPs {
		errs = append(errs, validation.IsValidIP(specPath.Child("externalIPs").Index(i), ip)...)
	}
	return errs
}

func serviceRow(s *corev1.Service, now time.Time) []interface{} {
	clusterIP := noneCell
	if len(s.Spec.ClusterIPs) > 0 {
		clusterIP = s.Spec.ClusterIPs[0]
	} else if s.Spec.ClusterIP != "" {
		clusterIP = s.Spec.ClusterIP
	}
	ports := servicePorts(s.Spec.Ports)
	if ports == "" {
		ports = noneCell
	}
	return []interface{}{s.Name, string(s.Spec.Type), clusterIP, serviceExternalIP(s), ports, HumanAge(s.CreationTimestamp, now), labels.FormatLabels(s.Spec.Selector)}
}

// servicePorts renders ports as kubectl does: 80/TCP, or 80:30001/TCP with a
// node port.
func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

func serviceExternalIP(s *corev1.Service) string {
	switch s.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(s.Spec.ExternalIPs) > 0 {
			return strings.Join(s.Spec.ExternalIPs, ",")
		}
		return noneCell
	case corev1.ServiceTypeLoadBalancer:
		var ips []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				ips = append(ips, in.IP)
			} else if in.Hostname != "" {
				ips = append(ips, in.Hostname)
			}
		}
		ips = append(ips, s.Spec.ExternalIPs...)
		if len(ips) == 0 {
			return "<pending>"
		}
		return strings.Join(ips, ",")
	case corev1.ServiceTypeExternalName:
		return s.Spec.ExternalName
	}
	return unknownCell
}
