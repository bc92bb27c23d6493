/* parity_lib.c — a small shared library over the kernels for hw_torch_parity.py, which
 * calls vram_k_* through ctypes on tensors PyTorch allocated. Linking the static kernels
 * library pulls in (and this library exports) the objects the functions below name. */
#include <vramkit_kernels.h>

/* The dtype numbers the script passes in vram_k_tensor.dtype: f32, f16, bf16. */
void vram_hw_parity_dtypes(int out[3]) {
    out[0] = VRAM_DTYPE_F32;
    out[1] = VRAM_DTYPE_F16;
    out[2] = VRAM_DTYPE_BF16;
}

/* sizeof(vram_k_tensor), so the script can check its ctypes mirror of the struct. */
unsigned vram_hw_parity_tensor_size(void) { return (unsigned)sizeof(vram_k_tensor); }

/* The kernels the script calls, referenced so the linker keeps them (as function pointers of
 * one type: converting between those is ISO C). */
typedef void (*vram_hw_parity_fn)(void);
const vram_hw_parity_fn vram_hw_parity_keep[] = {
    (vram_hw_parity_fn)vram_k_unscale, (vram_hw_parity_fn)vram_k_norm_workspace,
    (vram_hw_parity_fn)vram_k_clip_grad_norm, (vram_hw_parity_fn)vram_k_cast,
    (vram_hw_parity_fn)vram_k_gather_rows, (vram_hw_parity_fn)vram_k_last_error};
