"""Go's behaviour where KubeRay's output depends on it, reproduced byte for byte.

The bottom of the package: imported by ``api`` and ``controllers`` (and ``cmd``), importing
nothing of theirs. ``strconv`` and ``fmt`` text (:mod:`.go_text`), ``encoding/json``
(:mod:`.gojson`, over the generated struct layouts in :mod:`.go_struct_schema`), go-yaml v2
(:mod:`.goyaml`), ``resource.Quantity`` (:mod:`.quantity`), ``version.ParseGeneric``
(:mod:`.versions`), and the apimachinery validators, ``time.ParseDuration`` and
``strconv.Atoi`` KubeRay's validation relies on (:mod:`.goutil`).
"""
