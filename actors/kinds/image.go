package kinds

import "github.com/distribution/reference"

// defaultPullAlways reports whether the API server defaults an image's pull policy to
// Always rather than IfNotPresent. As Kubernetes does (its parsers.ParseImageName):
// the reference is parsed as Docker normalizes it; a tag of "latest", or neither tag
// nor digest, means Always; any other tag, a digest alone, or a reference that does
// not parse (validation reports it) means IfNotPresent.
func defaultPullAlways(image string) bool {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return false
	}
	if tagged, ok := named.(reference.Tagged); ok {
		return tagged.Tag() == "latest"
	}
	_, digested := named.(reference.Digested)
	return !digested
}
