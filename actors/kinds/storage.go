package kinds

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	supportedAccessModes    = []string{string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany), string(corev1.ReadWriteOnce), string(corev1.ReadWriteOncePod)}
	supportedReclaimPolicy  = []string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRecycle), string(corev1.PersistentVolumeReclaimRetain)}
	supportedVolumeModes    = []string{string(corev1.PersistentVolumeBlock), string(corev1.PersistentVolumeFilesystem)}
	betaStorageClassKey     = "volume.beta.kubernetes.io/storage-class"
	pvcImmutableSpecMessage = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
)

var persistentVolumes = &Resource{
	Name:         "persistentvolumes",
	SingularName: "persistentvolume",
	Kind:         "PersistentVolume",
	ShortNames:   []string{"pv"},
	Namespaced:   false,
	Verbs:        verbsAll,
	Subresources: []string{"status"},
	Stored:       true,

	New:     func() runtime.Object { return &corev1.PersistentVolume{} },
	NewList: func() runtime.Object { return &corev1.PersistentVolumeList{} },

	Default: defaulter(func(pv *corev1.PersistentVolume) {
		if pv.Spec.PersistentVolumeReclaimPolicy == "" {
			pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		}
		if pv.Spec.VolumeMode == nil {
			m := corev1.PersistentVolumeFilesystem
			pv.Spec.VolumeMode = &m
		}
		if pv.Status.Phase == "" {
			pv.Status.Phase = corev1.VolumePending
		}
	}),
	PrepareForCreate: defaulter(func(pv *corev1.PersistentVolume) {
		pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending}
	}),
	PrepareForUpdate: updater(func(pv, old *corev1.PersistentVolume) { pv.Status = *old.Status.DeepCopy() }),
	PrepareForStatusUpdate: updater(func(pv, old *corev1.PersistentVolume) {
		keepMetaForStatus(&pv.ObjectMeta, &old.ObjectMeta)
		pv.Spec = *old.Spec.DeepCopy()
	}),
	Validate: validator(func(pv *corev1.PersistentVolume) field.ErrorList {
		return append(validateMeta(&pv.ObjectMeta, false, nameDNSSubdomain), validatePVSpec(&pv.Spec)...)
	}),
	ValidateUpdate: updateValidator(func(pv, old *corev1.PersistentVolume) field.ErrorList {
		errs := validateMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta)
		errs = append(errs, validatePVSpec(&pv.Spec)...)
		if !equality.Semantic.DeepEqual(pv.Spec.PersistentVolumeSource, old.Spec.PersistentVolumeSource) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), "spec.persistentvolumesource is immutable after creation"))
		}
		return errs
	}),
	Fields: fieldSetter(func(pv *corev1.PersistentVolume) fields.Set { return metaFields(&pv.ObjectMeta, nil) }),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
		{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
		{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
		{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
		ageColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
	},
	RowAt: rower(pvRow),
}

func validatePVSpec(spec *corev1.PersistentVolumeSpec) field.ErrorList {
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateAccessModes(spec.AccessModes, specPath.Child("accessModes"))...)
	if len(spec.Capacity) == 0 {
		errs = append(errs, field.Required(specPath.Child("capacity"), ""))
	} else if _, ok := spec.Capacity[corev1.ResourceStorage]; !ok || len(spec.Capacity) > 1 {
		errs = append(errs, field.NotSupported(specPath.Child("capacity"), sortedKeys(spec.Capacity), []string{string(corev1.ResourceStorage)}))
	}
	errs = append(errs, validateResourceList(spec.Capacity, specPath.Child("capacity"))...)
	errs = append(errs, validateEnum(string(spec.PersistentVolumeReclaimPolicy), supportedReclaimPolicy, specPath.Child("persistentVolumeReclaimPolicy"))...)
	if spec.VolumeMode != nil {
		errs = append(errs, validateEnum(string(*spec.VolumeMode), supportedVolumeModes, specPath.Child("volumeMode"))...)
	}
	switch set := pointerFields(&spec.PersistentVolumeSource); {
	case len(set) == 0:
		errs = append(errs, field.Required(specPath, "must specify a volume type"))
	case len(set) > 1:
		errs = append(errs, field.Forbidden(specPath.Child(set[1]), "may not specify more than 1 volume type"))
	case spec.HostPath != nil:
		errs = append(errs, validateVolumePath(spec.HostPath.Path, specPath.Child("hostPath", "path"))...)
	case spec.NFS != nil && spec.NFS.Server == "":
		errs = append(errs, field.Required(specPath.Child("nfs", "server"), ""))
	}
	return errs
}

func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path) field.ErrorList {
	if len(modes) == 0 {
		return field.ErrorList{field.Required(fldPath, "at least 1 access mode is required")}
	}
	var errs field.ErrorList
	for _, m := range modes {
		if !contains(supportedAccessModes, string(m)) {
			errs = append(errs, field.NotSupported(fldPath, m, supportedAccessModes))
		}
	}
	return errs
}

// accessModesString renders modes as kubectl does: RWO,ROX,RWX,RWOP.
func accessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

func storageClass(annotations map[string]string, className *string) string {
	if c, ok := annotations[betaStorageClassKey]; ok {
		return c
	}
	if className != nil {
		return *className
	}
	return ""
}

func orUnset(s *string) string {
	if s == nil {
		return unsetCell
	}
	return *s
}

func volumeModeCell(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return unsetCell
	}
	return string(*m)
}

func pvRow(pv *corev1.PersistentVolume, now time.Time) []interface{} {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	return []interface{}{
		pv.Name, size.String(), accessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, storageClass(pv.Annotations, &pv.Spec.StorageClassName), orUnset(pv.Spec.VolumeAttributesClassName),
		pv.Status.Reason, HumanAge(pv.CreationTimestamp, now), volumeModeCell(pv.Spec.VolumeMode),
	}
}

var persistentVolumeClaims = &Resource{
	Name:         "persistentvolumeclaims",
	SingularName: "persistentvolumeclaim",
	Kind:         "PersistentVolumeClaim",
	ShortNames:   []string{"pvc"},
	Namespaced:   true,
	Verbs:        verbsAll,
	Subresources: []string{"status"},
	Stored:       true,

	New:     func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
	NewList: func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },

	Default: defaulter(func(pvc *corev1.PersistentVolumeClaim) {
		if pvc.Spec.VolumeMode == nil {
			m := corev1.PersistentVolumeFilesystem
			pvc.Spec.VolumeMode = &m
		}
		if pvc.Status.Phase == "" {
			pvc.Status.Phase = corev1.ClaimPending
		}
	}),
	PrepareForCreate: defaulter(func(pvc *corev1.PersistentVolumeClaim) {
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
	}),
	PrepareForUpdate: updater(func(pvc, old *corev1.PersistentVolumeClaim) { pvc.Status = *old.Status.DeepCopy() }),
	PrepareForStatusUpdate: updater(func(pvc, old *corev1.PersistentVolumeClaim) {
		keepMetaForStatus(&pvc.ObjectMeta, &old.ObjectMeta)
		pvc.Spec = *old.Spec.DeepCopy()
	}),
	Validate: validator(func(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
		return append(validateMeta(&pvc.ObjectMeta, true, nameDNSSubdomain), validatePVCSpec(&pvc.Spec)...)
	}),
	ValidateUpdate: updateValidator(validatePVCUpdate),
	Fields:         fieldSetter(func(pvc *corev1.PersistentVolumeClaim) fields.Set { return metaFields(&pvc.ObjectMeta, nil) }),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
		{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
		ageColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
	},
	RowAt: rower(pvcRow),
}

func validatePVCSpec(spec *corev1.PersistentVolumeClaimSpec) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateAccessModes(spec.AccessModes, specPath.Child("accessModes"))
	if _, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(specPath.Child("resources").Key(string(corev1.ResourceStorage)), ""))
	}
	errs = append(errs, validateResourceList(spec.Resources.Requests, specPath.Child("resources", "requests"))...)
	if spec.VolumeMode != nil {
		errs = append(errs, validateEnum(string(*spec.VolumeMode), supportedVolumeModes, specPath.Child("volumeMode"))...)
	}
	return errs
}

// validatePVCUpdate: the spec is immutable, except that the volume may be bound
// once and a bound claim's storage request may grow.
func validatePVCUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := validateMetaUpdate(&pvc.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePVCSpec(&pvc.Spec)...)
	next, prev := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if prev.VolumeName == "" {
		prev.VolumeName = next.VolumeName
	}
	if old.Status.Phase == corev1.ClaimBound {
		if q, ok := prev.Resources.Requests[corev1.ResourceStorage]; ok && next.Resources.Requests != nil {
			next.Resources.Requests[corev1.ResourceStorage] = q
		}
		prev.VolumeAttributesClassName = next.VolumeAttributesClassName
		newQ, prevQ := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
		if capQ, ok := old.Status.Capacity[corev1.ResourceStorage]; ok && newQ.Cmp(prevQ) < 0 && newQ.Cmp(capQ) < 0 {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
		}
	}
	if !equality.Semantic.DeepEqual(next, prev) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), pvcImmutableSpecMessage))
	}
	return errs
}

func pvcRow(pvc *corev1.PersistentVolumeClaim, now time.Time) []interface{} {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		modes = accessModesString(pvc.Status.AccessModes)
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = q.String()
	}
	return []interface{}{
		pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, storageClass(pvc.Annotations, pvc.Spec.StorageClassName),
		orUnset(pvc.Spec.VolumeAttributesClassName), HumanAge(pvc.CreationTimestamp, now), volumeModeCell(pvc.Spec.VolumeMode),
	}
}
