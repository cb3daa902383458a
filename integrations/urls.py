from rest_framework.routers import SimpleRouter

from integrations.views import IntegrationViewSet

router = SimpleRouter(trailing_slash=False)
router.register("integrations", IntegrationViewSet, basename="integration")

urlpatterns = router.urls
