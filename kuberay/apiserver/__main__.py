"""``python -m kuberay.apiserver``: the ``kuberay-apiserver`` console script, for checkouts
whose console script is not installed (``make run`` starts the server this way)."""

from kuberay.apiserver.main import main

if __name__ == "__main__":
    main()
