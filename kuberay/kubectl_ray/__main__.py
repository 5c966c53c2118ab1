"""``python -m kuberay.kubectl_ray``: the same as the ``kubectl-ray`` script."""

import sys

from kuberay.kubectl_ray.main import main

sys.exit(main())
