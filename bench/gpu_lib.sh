# Shared by the device scripts of the later GPU leases (gpu_captures.sh, gpu_levels_score.sh); sourced from
# the repository root on the device machine.  (gpu_tygem.sh and gpu_finetune.sh keep their own copies of
# the preamble: they ran as they stand.)

# device_start: the one dependency the device image lacks (sgfmill, from .whl/), everything after it
# copied to $OUT/log.txt, T0 and stamp() for the stages' times, and what machine this is.
device_start() {
    export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
    if ! python3 -c "import sgfmill" 2>/dev/null; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
        export PYTHONPATH=$PYTHONPATH:/tmp/site
    fi
    exec > >(tee -a "$OUT/log.txt") 2>&1
    T0=$(date +%s)
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null
    python3 -c "import torch; print('torch', torch.__version__, torch.cuda.is_available() and torch.cuda.get_device_name(0))"
    echo "cores: $(nproc)"
}
stamp() { echo "[$(($(date +%s) - T0)) s] $*"; }

# katago_unpack K BUNDLE: the katrain wheel's KataGo (stripped, xz'd), its libzip and this machine's OpenCL
# ICD loader from BUNDLE, as the wrapper K/katago; and OCL_ICD_VENDORS (exported, and written to K/env for
# subshells) naming NVIDIA's OpenCL alone where the machine has it.  The lent image's /etc/OpenCL/vendors
# lists pocl and not NVIDIA, so without this KataGo runs on the CPU (the third lease's did).
katago_unpack() {
    local k=$1 bundle=$2 icd
    mkdir -p "$k"
    xz -dc "$bundle/katago.xz" > "$k/katago.bin" && chmod +x "$k/katago.bin"
    cp "$bundle/libzip.so.4" "$bundle/libOpenCL.so.1" "$k/"
    printf '#!/bin/sh\nexport LD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"\nexec "%s/katago.bin" "$@"\n' "$k" "$k" > "$k/katago"
    chmod +x "$k/katago"
    echo "OpenCL vendors listed: $(ls /etc/OpenCL/vendors 2>/dev/null | tr '\n' ' ')"
    icd=$(find / -xdev -name 'libnvidia-opencl.so*' 2>/dev/null | head -n 1)
    [ -z "$icd" ] && icd=$(find /usr/local/nvidia /usr/lib* -name 'libnvidia-opencl.so*' 2>/dev/null | head -n 1)
    echo "NVIDIA OpenCL: ${icd:-none found}"
    : > "$k/env"
    if [ -n "$icd" ]; then
        mkdir -p "$k/vendors" && echo "$icd" > "$k/vendors/nvidia.icd"
        echo "export OCL_ICD_VENDORS=$k/vendors" > "$k/env"
    fi
    . "$k/env"
    touch "$k/empty.cfg"
}
