from django.urls import path
from rest_framework.routers import SimpleRouter

from integrations.views import IntegrationViewSet, delivery_retry

router = SimpleRouter(trailing_slash=False)
router.register("integrations", IntegrationViewSet, basename="integration")

urlpatterns = [
    *router.urls,
    path("deliveries/<str:delivery_id>/retry", delivery_retry, name="delivery-retry"),
]
