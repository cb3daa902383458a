from rest_framework.routers import SimpleRouter

from integrations.hooks.views import HookViewSet

router = SimpleRouter(trailing_slash=False)
router.register("hooks", HookViewSet, basename="hook")

urlpatterns = router.urls
