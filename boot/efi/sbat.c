/* boot/efi/sbat.c - ticklab.efi's SBAT metadata (the .sbat section).
 *
 * shim (since 15.3) refuses, under Secure Boot, any image it loads that carries no .sbat
 * section: a CSV text of components and their security generations, which the firmware's
 * SbatLevel variable can revoke (shim's SBAT.md). The first line names the format; the
 * second is ticklab's own entry (component, generation, vendor, package, version, where to
 * look). Raise the generation only for a fix that must revoke older signed images. Six
 * non-empty columns per line, no commas inside a column: shim rejects anything else. */
#ifndef TICKLAB_VERSION
#define TICKLAB_VERSION "unknown"
#endif

__attribute__((section(".sbat"), used, aligned(4096))) static const char sbat[] =
    "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n"
    "ticklab,1,ticklab,ticklab," TICKLAB_VERSION ",boot/efi/README.md in the ticklab source\n";
