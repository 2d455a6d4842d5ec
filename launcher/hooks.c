/* hooks.c - hands the launcher's services to modules below it. */
#include "launcher/launcher.h"

void launcher_init_hooks(void)
{
}
