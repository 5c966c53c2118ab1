"""Go's behaviour where KubeRay's output depends on it, reproduced byte for byte.

The bottom of the package: imported by the runtime, ``api``, ``controllers``, ``cmd``, the
plugin and the history server, importing nothing else of ``kuberay``. ``strconv`` and ``fmt``
text (:mod:`.go_text`), ``encoding/json`` (:mod:`.gojson`, over the generated struct layouts
in :mod:`.go_struct_schema`), go-yaml v2 (:mod:`.goyaml`), ``resource.Quantity``
(:mod:`.quantity`), ``version.ParseGeneric`` (:mod:`.versions`), the apimachinery validators,
``time.ParseDuration``, ``strconv.Atoi`` and ``strconv.ParseBool`` (:mod:`.goutil`), and RFC 3339
timestamps and ``Duration.String`` (:mod:`.gotime`). Each of these is parsed here and nowhere
else (``tests/unit/lint/test_one_home.py``).
"""
