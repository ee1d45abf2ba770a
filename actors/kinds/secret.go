package kinds

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var secrets = &Resource{
	Name:         "secrets",
	SingularName: "secret",
	Kind:         "Secret",
	Namespaced:   true,
	Verbs:        verbsAll,
	Stored:       true,

	New:     func() runtime.Object { return &corev1.Secret{} },
	NewList: func() runtime.Object { return &corev1.SecretList{} },

	// stringData is write-only: it is merged into data (winning over it) and
	// dropped, as the v1 conversion does.
	Default: defaulter(func(s *corev1.Secret) {
		if s.Type == "" {
			s.Type = corev1.SecretTypeOpaque
		}
		if len(s.StringData) > 0 && s.Data == nil {
			s.Data = map[string][]byte{}
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
		s.StringData = nil
	}),
	Validate: validator(func(s *corev1.Secret) field.ErrorList {
		return append(validateMeta(&s.ObjectMeta, true, nameDNSSubdomain), validateSecret(s)...)
	}),
	ValidateUpdate: updateValidator(func(s, old *corev1.Secret) field.ErrorList {
		errs := validateMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
		if s.Type != old.Type {
			errs = append(errs, field.Invalid(field.NewPath("type"), s.Type, "field is immutable"))
		}
		if old.Immutable != nil && *old.Immutable {
			if s.Immutable == nil || !*s.Immutable {
				errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
			}
			if !equalData(s.Data, old.Data) {
				errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
			}
		}
		return append(errs, validateSecret(s)...)
	}),
	Fields: fieldSetter(func(s *corev1.Secret) fields.Set {
		return metaFields(&s.ObjectMeta, fields.Set{"type": string(s.Type)})
	}),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
		{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
		ageColumn,
	},
	RowAt: rower(func(s *corev1.Secret, now time.Time) []interface{} {
		return []interface{}{s.Name, string(s.Type), int64(len(s.Data)), HumanAge(s.CreationTimestamp, now)}
	}),
}

func equalData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || string(v) != string(w) {
			return false
		}
	}
	return true
}

// requiredSecretKeys are the data keys each built-in secret type must carry.
var requiredSecretKeys = map[corev1.SecretType][]string{
	corev1.SecretTypeDockercfg:        {corev1.DockerConfigKey},
	corev1.SecretTypeDockerConfigJson: {corev1.DockerConfigJsonKey},
	corev1.SecretTypeSSHAuth:          {corev1.SSHAuthPrivateKey},
	corev1.SecretTypeTLS:              {corev1.TLSCertKey, corev1.TLSPrivateKeyKey},
}

func validateSecret(s *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	dataPath := field.NewPath("data")
	total := 0
	for _, k := range sortedKeys(s.Data) {
		v := s.Data[k]
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(dataPath.Key(k), k, msg))
		}
		total += len(v)
	}
	if total > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""))
			errs = append(errs, field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case "":
		errs = append(errs, field.Required(field.NewPath("type"), ""))
	}
	for _, key := range requiredSecretKeys[s.Type] {
		if _, ok := s.Data[key]; !ok {
			errs = append(errs, field.Required(dataPath.Key(key), ""))
		}
	}
	return errs
}
