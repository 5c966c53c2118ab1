"""``python -m kuberay.cmd.kubectl_ray``: the same as the ``kubectl-ray`` script."""

import sys

from kuberay.cmd.kubectl_ray.main import main

sys.exit(main())
