package kinds

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Scheme knows every type the API serves; Codecs are its serializers (JSON, YAML,
// protobuf) for content negotiation.
var (
	Scheme = runtime.NewScheme()
	Codecs = serializer.NewCodecFactory(Scheme)
)

// GroupVersion is the only API version served.
var GroupVersion = schema.GroupVersion{Group: "", Version: "v1"}

func init() {
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, autoscalingv1.AddToScheme} {
		if err := add(Scheme); err != nil {
			panic(err)
		}
	}
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	metav1.AddMetaToScheme(Scheme)
}
