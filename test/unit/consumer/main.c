/* A user's program: the core works with nothing but its headers. */
#include <stdio.h>
#include <vramkit/vramkit.h>

int main(void) {
    uint64_t bytes = 0;
    if (vram__mul_u64(51779u, 240624u, &bytes) != VRAM_OK) return 1;
    printf("%llu %s\n", (unsigned long long)bytes, vram_status_str(VRAM_OK));
    return bytes == 12459270096ull ? 0 : 1;
}
