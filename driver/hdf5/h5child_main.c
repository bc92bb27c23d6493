/* driver/hdf5/h5child_main.c — main() of vramkit-h5, the HDF5 child program: the only program
 * of vramkit that links HDF5 (h5child.c). Started by `vramkit __h5` (h5child_exec.c) as
 * `vramkit-h5 __h5`, with the socket and the file as descriptors 3 and 4; run otherwise, it
 * says what it is and exits 2. */
#include "stream/h5desc.h"

int main(int argc, char **argv) {
    return argc > 1 ? vram_h5_child_main(argc - 1, argv + 1) : vram_h5_child_main(1, argv);
}
